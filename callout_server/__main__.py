from callout_server.cli import main

main()
