import sys

from hrpsim.cli import main

sys.exit(main())
