"""The bundled benchmark instances (CSV files and manifests), installed as ``oraclepriv.instance_data``
and read through :func:`oraclepriv.instances.instances_dir` (``importlib.resources``)."""
