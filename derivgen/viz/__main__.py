import sys

from derivgen.viz.script import main

sys.exit(main())
