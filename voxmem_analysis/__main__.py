import sys

from voxmem_analysis.cli import main

sys.exit(main())
