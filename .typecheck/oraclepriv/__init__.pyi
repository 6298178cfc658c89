# mypy's view of the installed layout: oraclepriv.solvers is the top-level solvers/ folder (setuptools'
# package-dir), which mypy cannot see through the editable install's import hook; the solvers link beside
# this file maps the name to the folder. The real oraclepriv package is found first, in the repository root.
