import sys

from ttrecord.cli.main import main

sys.exit(main())
