"""`python -m cpsgrad`: the same as the `cpsgrad` command."""

import sys

from cpsgrad.cli import main

sys.exit(main())
