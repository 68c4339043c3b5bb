import sys

from hrpsim.cli import main

if __name__ == "__main__":  # not when a tool imports every module (the API reference's)
    sys.exit(main())
