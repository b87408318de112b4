"""The book's tooling, one package; `./book` is its launcher (tools/book/cli.py).

    cli.py        the command line of ./book: test, run, bench, release, grade, check, validate
    build.py      Debian packages, configure/build/ctest, the chapter list and build targets
    pages/        the page model (pages/model.py: markdown-it, parsed once, with source line
                  maps, and the one table of the pages' comment markers) and its passes: sync and
                  check against the build, links, the site filter and its HTML fixes, cited
                  tests, the search index, the source pages, generated regions
    homework/     the homework product: solution markers, release, autograder bundle, grading
                  and its formats, validate, staging of whole output sets
    browser/      the one headless-Chromium driver (DevTools protocol over a pipe) with its
                  in-page helpers (helpers.js); the checks that use it are tests/site/check_site.py
                  and check_live.py, their in-page code in .js files beside them
    performance.py  the performance page drawn from one ./book bench run's JSON

Run with the package's folder on PYTHONPATH, never by editing sys.path:
    PYTHONPATH=tools /usr/bin/python3 -B -m book.cli ...
CMake passes ${BOOK_PYTHON} (top-level CMakeLists.txt), which sets it.
"""
