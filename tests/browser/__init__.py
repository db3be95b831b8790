"""Browser tests of the RBAC insight page: real headless Chromium driven by Playwright."""
