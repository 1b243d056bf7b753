"""Shadow evaluation: replay recent recorded NLU traffic against a candidate configuration.

An operator about to switch the NLU tier to another model picks a stored configuration; the
most recent recorded decisions (`callout.nlu_call_inputs`, kept `[calllog] nlu_inputs_days`)
are sent to it through the NLU tier's own path (`NluService.replay`: same prompt, shaping,
retry, deadline and validation as live traffic), at a bounded concurrency, and each answer
is compared with the recorded decision. Nothing here changes the active configuration.

    service.py     EvaluationService: start/cancel/read; one run per worker; restart sweep
    runner.py      EvaluationRun: the replay loop (bounded, cancellable, buffered writes)
    compare.py     pure: does a candidate's decision agree with the recorded one
    summary.py     pure: agreement, percentiles, codes, by node, latency histogram
    repository.py  SQL;  models.py tables;  schemas.py bodies;  errors.py;  router.py
"""
