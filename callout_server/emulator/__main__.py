"""``python -m callout_server.emulator --host 127.0.0.1 --port 8900``."""

from callout_server.emulator import main

main()
