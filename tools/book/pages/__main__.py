"""python -m book.pages sync|check|sources ...: see book.pages.sync."""
import sys

from .sync import main

sys.exit(main(sys.argv))
