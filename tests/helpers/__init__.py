"""What the test modules share, one module per concept (docs/TESTING.md lists them).

The helpers that start something heavy decide a test's tier (``tests/test_tiers.py``):
``toolchains.built_bot`` and ``runtimes.require_runtime`` (toolchain), ``browser`` (browser),
``ray_cluster`` (ray), ``toolchains.require_bwrap`` and ``cli.start_hearts`` (slow).
"""
