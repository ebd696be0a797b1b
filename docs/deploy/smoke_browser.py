"""The browser half of docs/deploy/smoke.sh: Debian's chromium (Playwright, the helpers of
tests/browser_util.py) opens the stack's https URL, logs in through the local OpenID Connect provider
(reached by its compose name, `oidc`, mapped to 127.0.0.1), opens the Review page, decides the first
case with its key and waits until the server has acknowledged it. Prints the decision as JSON
(reviewer, item, round, criterion, value) for smoke.sh to find in PostgreSQL; on a failure, saves
what the page showed to $SMOKE_SHOT when that is set.

  .venv/bin/python docs/deploy/smoke_browser.py BASE_URL SUBJECT EMAIL GEN_ID
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from browser_util import (  # the tests' helpers, found above
    CHROMIUM_ARGS,
    card_case,
    card_choices,
    card_decide,
    card_key,
    card_saved,
    chromium_path,
    log_in,
)


def main(base: str, sub: str, email: str, gen: str) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        args = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP oidc 127.0.0.1"]
        browser = p.chromium.launch(executable_path=chromium_path(), args=args)
        try:
            ctx = browser.new_context(ignore_https_errors=True, viewport={"width": 1400, "height": 900})
            page = ctx.new_page()
            try:
                log_in(page, base, sub)
                page.goto(f"{base}/review?gen={gen}")
                case = card_case(page)
                value = card_choices(page)[0]
                card_decide(page, value)
                card_saved(page)
            except Exception:
                if os.environ.get("SMOKE_SHOT"):  # what the page showed, for whoever reads the failure
                    page.screenshot(path=os.environ["SMOKE_SHOT"])
                raise
        finally:
            browser.close()
    item, rnd, criterion = card_key(case)
    return {"reviewer": email, "item_id": item, "gen_round": rnd, "criterion": criterion, "value": value}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:5])))
