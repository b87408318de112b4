"""The GitHub Classroom workflow that ./book release puts in the student copy
(.github/workflows/classroom.yml): on a GitHub-hosted runner (user `runner`, not root, with
passwordless sudo) it installs only the packages grading needs, grades, and hands the score to
Classroom's grading reporter, also when the student's code does not compile (the reporter
step runs `if: always()`, and ./book grade writes the result, with every exercise's real
maximum, before it exits 1)."""
from book.build import GRADE_PACKAGES

WORKFLOW_PATH = ".github/workflows/classroom.yml"


def classroom_workflow():
    return f"""# GitHub Classroom's autograding of this copy of the book (made by ./book release).
# Classroom reads the score from the reporter step; see docs/instructors.md, "GitHub Classroom".
name: Autograding
on: [push, workflow_dispatch, repository_dispatch]
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  grade:
    runs-on: ubuntu-24.04
    timeout-minutes: 30
    if: github.actor != 'github-classroom[bot]'
    steps:
      - uses: actions/checkout@v4
      - name: Install the packages grading needs
        run: >-
          sudo apt-get update -qq &&
          sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends
          {" ".join(GRADE_PACKAGES)}
      - name: Grade the exercises
        id: book
        run: ./book grade --format github-classroom --out grade.json
      - name: Report the score to GitHub Classroom
        if: always()
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
          BOOK_RESULTS: ${{{{ steps.book.outputs.result }}}}
        with:
          runners: book
"""
