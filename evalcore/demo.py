"""The seeded, SIMULATED demo world that ships in ``data/demo``.

Nothing here came from a real system, a real judge or a real person. Every suite, generation,
run, label set and session is drawn from ONE model of truth with ``numpy.random.default_rng``
seeded by ``seed`` (each world piece gets its own stream, ``default_rng([seed, <piece tag>])``,
so tuning one piece never reshuffles another). Timestamps are fixed, so two calls with one seed
write identical content.

The model of truth
------------------
*Support suite* (600 customer-support items). Each item has a true pass/fail on six binary
criteria. ``grounded`` and ``no_fabrication`` are genuinely associated (an answer that strays
from the passage tends to invent details: phi about 0.55); every other pair is independent.

*Judges* read each (item, criterion) as the truth, except for a few fixed misreadings, and a
few "borderline" cells whose reading is a fresh coin in every judge round (round-to-round flips).

*Harnesses* then turn readings into verdicts:

* ``single``: one call emits all six fields in a fixed order. After a failed field the next one
  is forced to fail with probability ``c_k`` that rises with emission position ``k`` (the call
  conditions each field on what it already wrote). The carryover draw is fixed per item, so it
  does not itself add round-to-round flips. This manufactures association between unrelated
  criteria (answers_question and cites_source) and a position effect.
* ``single`` with the ``independent`` prompt variant: the same carryover, scaled by 0.9.
* ``grouped``: carryover only inside a group's call, and weaker.
* ``split``: one call per criterion, no carryover: what is left is the real association.

*Human labels* (60 items) are the truth with about 1% slips.

*Accounts suite* (120 items) is answered by two arms that differ in the writer prompt alone:
one writes long, heading-and-bullet answers, the other short ones; both sometimes bail, and
whether they bail flips across generation rounds for a few items. A blinded pairwise session
compares them; simulated reviewers and a model grader (with a first-position preference) choose.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pyarrow as pa

from . import schema as S
from .store import Store, default_keys_dir

# --------------------------------------------------------------------------- constants

DEFAULT_SEED = 89  # picked by simulation: every figure tests/test_demo.py checks holds with margin
CREATED_AT = datetime(2026, 1, 1, tzinfo=timezone.utc)
SOURCE = "simulated"
PRICE_MAP_VERSION = "simulated-prices-2026-01"

# support suite
SUPPORT = "support"
N_SUPPORT_ITEMS = 600
HOLDOUT_SHARE = 0.10
UNANSWERABLE_SHARE = 0.06
NOTE_SHARE = 0.05  # answers that end with an honest "couldn't find ..." note (the ternary bug's trigger)
CRITERIA = ("answers_question", "grounded", "cites_source", "no_fabrication",
            "refuses_when_unanswerable", "on_tone")
TRUTH_FAIL = {  # marginal true fail rates (grounded / no_fabrication are set jointly below)
    "answers_question": 0.15, "cites_source": 0.10, "refuses_when_unanswerable": 0.05, "on_tone": 0.06,
}
P_GROUNDED_FAIL = 0.19
P_NOFAB_FAIL_IF_UNGROUNDED = 0.62
P_NOFAB_FAIL_IF_GROUNDED = 0.074

# judges
JUDGE_A = {"model": "simulated/judge-alpha-2025-06-01", "reported": "judge-alpha-2025-06-01",
           "family": "alpha", "price_in": 3.0, "price_out": 15.0,  # USD per million tokens
           "miss_fail": 0.06, "false_fail": 0.012, "borderline": 0.062}
JUDGE_B = {"model": "simulated/judge-beta-2025-04-15", "reported": "judge-beta-2025-04-15",
           "family": "beta", "price_in": 0.5, "price_out": 1.5,
           "miss_fail": 0.22, "false_fail": 0.008, "borderline": 0.06}
JUDGE_ROUNDS = 3
BORDERLINE_WEIGHT = {  # judgement-heavy criteria have more borderline cells than objective ones
    "answers_question": 0.4, "grounded": 2.0, "cites_source": 0.2, "no_fabrication": 2.0,
    "refuses_when_unanswerable": 0.4, "on_tone": 1.0,
}

SINGLE_FIELD_ORDER = ["answers_question", "cites_source", "on_tone", "refuses_when_unanswerable",
                      "grounded", "no_fabrication"]
CARRYOVER = (0.0, 0.66, 0.78, 0.86, 0.94, 0.97)  # c_k by emission position k
INDEPENDENT_SCALE = 0.9
GROUPS = [["answers_question", "on_tone"], ["grounded", "no_fabrication", "cites_source"],
          ["refuses_when_unanswerable"]]
GROUP_CARRYOVER = (0.0, 0.30, 0.40)

TERNARY_NOISE = 0.04  # the ternary judge moves a label one step this often
POSTPROCESS_BUGGY = "pp-2.1-buggy"
BUG_PATTERN = re.compile(r"couldn't find", re.IGNORECASE)
N_POLLUTED_ITEMS = 40
POLLUTED_FAIL_SHARE = 0.035
N_PARTIAL_ITEMS = 150
N_HUMAN_ITEMS = 60
HUMAN_SLIP = 0.01
HUMAN_OVERLAP = 12  # items the second annotator also labels

# accounts suite
ACCOUNTS = "accounts"
N_ACCOUNTS_ITEMS = 120
GEN_ROUNDS = 3
ARMS = {"concise": "accounts-concise", "detailed": "accounts-detailed"}  # arm name -> gen id
ARM_STYLE = {  # share of answers with a heading, bullet probability, steps, range of extra sentences
    # Lengths overlap (SD ~75 words in each arm, means ~94 apart) so that, before normalisation,
    # the heading (a title, and sub-headings in the long arm) is the strongest tell and length the
    # second; normalisation strips the first and leaves the second (docs/PAIRWISE.md).
    "concise": {"heading": 0.54, "bullets": 0.42, "steps": (2, 3, 4), "extras": (0, 21), "sections": 0},
    "detailed": {"heading": 0.91, "bullets": 0.62, "steps": (4, 5, 6), "extras": (7, 27), "sections": 2},
}
BAIL_MIX = ((0.80, 0.02), (0.15, 0.35), (0.05, 0.85))  # (share of items, bail probability per round)
MIRROR_SHARE = 0.10
N_HOLDOUT_PAIRS = 6
N_PRACTICE_PAIRS = 15
REVIEWERS = {"sim-reviewer-1": 0.80, "sim-reviewer-2": 0.55, "sim-reviewer-3": 0.35}  # share of pairs seen
LEFT_BIAS_PEOPLE = 0.05
FIRST_BIAS_GRADER = 0.15  # the grader's switch to the first-read answer
GRADER_SAME = 0.03
P_SAME = 0.08


def _rng(seed: int, *tags: str) -> np.random.Generator:
    """An independent, deterministic stream per world piece."""
    return np.random.default_rng([seed, *(zlib.crc32(t.encode()) for t in tags)])


def _at(hours: float) -> datetime:
    return CREATED_AT + timedelta(hours=hours)


# --------------------------------------------------------------------------- text banks

# Slot values the templates draw from.
SLOTS = {
    "days": [3, 5, 7], "days2": [5, 7, 10], "window": [14, 30, 60], "hours": [24, 48, 72],
    "amount": ["$12.99", "$24.00", "$39.50", "$58.20", "$89.99", "$120.00"],
    "plan": ["Basic", "Plus", "Pro", "Team"], "plan2": ["Plus", "Pro", "Team", "Enterprise"],
    "carrier": ["UPS", "FedEx", "DHL", "USPS"], "region": ["Canada", "the EU", "Australia", "Mexico"],
    "product": ["desk lamp", "blender", "backpack", "headphones", "coffee grinder", "yoga mat",
                "phone case", "water bottle", "keyboard", "rain jacket"],
    "fee": ["$4.99", "$7.50", "$9.95"], "limit": [3, 5, 10], "count": [2, 3, 4],
}

# One topic per help article. q: question variants; passage/reference/must_have/wrong_if are
# filled from SLOTS; fab: an invented detail; stray: a claim the passage does not support.
TOPICS: list[dict[str, Any]] = [
    dict(cls="billing", subject="a duplicate charge",
         q=["I was charged twice for order {order}. How do I get the extra charge back?",
            "Why are there two charges of {amount} on my card for one order?",
            "My statement shows {amount} taken twice. Is that a mistake?"],
         passage="A second charge for the same order is usually an authorisation hold. Holds fall off "
                 "within {days} business days. If a duplicate has settled, support refunds it to the "
                 "original card within {days2} business days.",
         reference="The second charge is most likely a temporary hold that falls off within {days} business "
                   "days; if it has settled, we refund it to your card within {days2} business days.",
         must_have=["Second charge is likely a temporary hold", "Hold falls off within {days} business days",
                    "Settled duplicates are refunded to the original card"],
         wrong_if=["Tells the customer to dispute the charge with their bank first"],
         fab="We'll also add a {fee} credit to your account for the trouble.",
         stray="This usually happens when your bank is running slow."),
    dict(cls="billing", subject="updating a payment card",
         q=["How do I change the card I pay with?", "My card expired, where do I put the new one?",
            "Can I switch my payment method before the next bill on the {plan} plan?"],
         passage="Payment cards are managed under Settings > Billing > Payment methods. A new card can be "
                 "added and set as default at any time; the next invoice is charged to the default card.",
         reference="Go to Settings > Billing > Payment methods, add the new card and set it as default; "
                   "your next invoice goes to that card.",
         must_have=["Settings > Billing > Payment methods", "Set the new card as default"],
         wrong_if=["Says the card can only be changed by contacting support"],
         fab="Changing cards also resets your billing date to today.",
         stray="Most banks prefer you update it a week before the bill."),
    dict(cls="billing", subject="an invoice copy",
         q=["Where can I download an invoice for my {plan} subscription?",
            "I need a VAT invoice for last month, how do I get one?",
            "Can you send me a copy of my receipt for {amount}?"],
         passage="Invoices for the last {limit} years are under Settings > Billing > Invoices as PDF. "
                 "A VAT number added to the billing profile appears on every invoice issued afterwards.",
         reference="Download it as a PDF from Settings > Billing > Invoices; add your VAT number to the "
                   "billing profile so it appears on new invoices.",
         must_have=["Invoices are under Settings > Billing > Invoices", "VAT number goes in the billing profile"],
         wrong_if=["Says past invoices are updated with a newly added VAT number"],
         fab="Invoices older than a year are emailed on request within {hours} hours.",
         stray="Accountants usually need the PDF rather than a screenshot."),
    dict(cls="billing", subject="a price change",
         q=["Why did my {plan} bill go up this month?", "My renewal was {amount}, higher than before. Why?",
            "Did the price of the {plan} plan change?"],
         passage="Plan prices changed on the first of the month. Existing subscribers were emailed {window} "
                 "days ahead and keep the old price until their next renewal.",
         reference="Plan prices changed this month; you were emailed {window} days before and the new price "
                   "applies from your next renewal.",
         must_have=["Plan prices changed", "Notice was emailed {window} days ahead"],
         wrong_if=["Says the charge is an error and will be refunded"],
         fab="Customers who complain get the old price for another year.",
         stray="Prices tend to change at the start of each quarter."),
    dict(cls="shipping", subject="delivery time",
         q=["When will order {order} arrive?", "How long does standard shipping take to {region}?",
            "It's been a week and my {product} hasn't shown up. Normal?"],
         passage="Standard shipping takes {days}-{days2} business days after dispatch; international orders "
                 "to {region} add up to {days} more days for customs. Tracking appears once the {carrier} "
                 "label is scanned.",
         reference="Standard shipping is {days}-{days2} business days after dispatch, plus up to {days} days "
                   "for customs to {region}; tracking shows once {carrier} scans the label.",
         must_have=["{days}-{days2} business days after dispatch", "Customs can add up to {days} days"],
         wrong_if=["Promises delivery by a specific date"],
         fab="If it's late we refund the shipping fee automatically.",
         stray="Deliveries are usually faster early in the week."),
    dict(cls="shipping", subject="a tracking number",
         q=["Where do I find the tracking number for order {order}?", "My tracking link says label created, "
            "what does that mean?", "How do I track my {product}?"],
         passage="The tracking number is in the dispatch email and under Orders > {order}. 'Label created' "
                 "means {carrier} has not scanned the parcel yet; updates usually start within {hours} hours.",
         reference="Find it in the dispatch email or under Orders; 'label created' means {carrier} has not "
                   "scanned it yet, and updates usually start within {hours} hours.",
         must_have=["Tracking number is in the dispatch email or under Orders",
                    "'Label created' means not scanned yet"],
         wrong_if=["Says the parcel is lost"],
         fab="You can also get live GPS location of the van in the app.",
         stray="Carriers often skip the first scan on busy days."),
    dict(cls="shipping", subject="changing the delivery address",
         q=["Can I change the shipping address on order {order}?", "I moved, can my {product} go to my new "
            "address?", "I typed the wrong street, can you fix it?"],
         passage="The address can be edited under Orders until the order is dispatched. After dispatch, "
                 "{carrier} can redirect the parcel for a {fee} fee through its own site.",
         reference="Edit it under Orders before dispatch; after dispatch, {carrier} can redirect it for "
                   "{fee} on its site.",
         must_have=["Edit the address under Orders before dispatch", "After dispatch the carrier can redirect it"],
         wrong_if=["Says the address can never be changed"],
         fab="We'll reship to the new address for free if the first one fails.",
         stray="Redirects usually add a day or two."),
    dict(cls="shipping", subject="a damaged parcel",
         q=["My {product} arrived broken. What now?", "The box for order {order} was crushed and the item is "
            "damaged.", "Item came damaged, do I need to send it back?"],
         passage="Damaged items are reported under Orders > Report a problem within {window} days, with a "
                 "photo. A replacement or refund is offered; the damaged item does not need to be returned.",
         reference="Report it under Orders > Report a problem within {window} days with a photo; you'll be "
                   "offered a replacement or refund and don't need to send it back.",
         must_have=["Report within {window} days with a photo", "No need to return the damaged item"],
         wrong_if=["Asks the customer to ship the damaged item back first"],
         fab="You'll also receive a {amount} voucher.",
         stray="Most damage happens at the last sorting depot."),
    dict(cls="account", subject="resetting a password",
         q=["I can't log in, how do I reset my password?", "The reset email never arrived. What should I do?",
            "How do I change my password?"],
         passage="Use 'Forgot password' on the sign-in page; the reset link is valid for {hours} hours. If no "
                 "email arrives within a few minutes, check spam or request it again; only {limit} requests "
                 "per hour are allowed.",
         reference="Click 'Forgot password' on the sign-in page; the link lasts {hours} hours. Check spam if it "
                   "doesn't arrive, and note the limit of {limit} requests per hour.",
         must_have=["Use 'Forgot password' on the sign-in page", "Reset link is valid for {hours} hours"],
         wrong_if=["Asks the customer to send their current password"],
         fab="Support can also read your old password back to you.",
         stray="Reset emails are slower for free email providers."),
    dict(cls="account", subject="two-factor authentication",
         q=["How do I turn on two-factor authentication?", "I lost my phone with my 2FA app. How do I get in?",
            "Can I use SMS codes instead of an app for 2FA?"],
         passage="Two-factor authentication is set up under Settings > Security with an authenticator app. "
                 "Backup codes shown at setup let you sign in without the phone. SMS codes are not offered.",
         reference="Turn it on under Settings > Security with an authenticator app; use your backup codes if "
                   "you lose the phone. SMS codes aren't available.",
         must_have=["Settings > Security with an authenticator app", "Backup codes work without the phone"],
         wrong_if=["Says SMS codes are available"],
         fab="Support can disable 2FA over chat if you give your order number.",
         stray="Most customers prefer the app over SMS anyway."),
    dict(cls="account", subject="changing the account email",
         q=["How do I change the email on my account?", "I no longer use my old email, can I update it?",
            "Can I move my account to a work email?"],
         passage="The sign-in email is changed under Settings > Profile. A confirmation link goes to the new "
                 "address and the change applies once it is clicked; the old address gets a notice.",
         reference="Change it under Settings > Profile and click the confirmation link sent to the new "
                   "address; the old address is notified.",
         must_have=["Change it under Settings > Profile", "Confirm via the link sent to the new address"],
         wrong_if=["Says a new account must be created"],
         fab="The change also moves your order history to the new email's other accounts.",
         stray="Work emails sometimes block our messages."),
    dict(cls="account", subject="closing an account",
         q=["How do I delete my account?", "I want to close my account and remove my data.",
            "Can I cancel everything and delete my profile?"],
         passage="Accounts are closed under Settings > Privacy > Close account. Active subscriptions must be "
                 "cancelled first. Personal data is deleted within {window} days, except invoices kept for tax law.",
         reference="Cancel any subscription, then use Settings > Privacy > Close account; data is deleted within "
                   "{window} days except invoices kept for tax reasons.",
         must_have=["Cancel active subscriptions first", "Data deleted within {window} days except invoices"],
         wrong_if=["Says all data including invoices is deleted immediately"],
         fab="Closed accounts can be restored any time within a year.",
         stray="Most people who close an account come back later."),
    dict(cls="returns", subject="a return window",
         q=["Can I still return my {product}? I bought it {count} weeks ago.", "What is your return policy?",
            "How many days do I have to send back order {order}?"],
         passage="Items can be returned within {window} days of delivery if unused and in the original "
                 "packaging. Start the return under Orders > Return an item to get a prepaid {carrier} label.",
         reference="You have {window} days from delivery for unused items in original packaging; start it under "
                   "Orders > Return an item for a prepaid {carrier} label.",
         must_have=["{window} days from delivery", "Unused and in original packaging",
                    "Start under Orders > Return an item"],
         wrong_if=["Quotes a different return window"],
         fab="Opened items can be returned too if you pay a small restocking fee.",
         stray="Returns are processed faster on weekdays."),
    dict(cls="returns", subject="refund timing",
         q=["When will I get my refund for order {order}?", "I sent the {product} back {count} weeks ago, where "
            "is my money?", "How long do refunds take?"],
         passage="Refunds are issued within {days} business days after the return is received at the "
                 "warehouse, to the original payment method. Banks may take up to {days2} more days to show it.",
         reference="We refund within {days} business days of receiving the return, to the original payment "
                   "method; your bank may take up to {days2} more days.",
         must_have=["Within {days} business days of receiving the return", "To the original payment method"],
         wrong_if=["Says the refund is issued as store credit only"],
         fab="Refunds over {amount} are split into two payments.",
         stray="Refunds are usually quicker for card payments than for PayPal."),
    dict(cls="returns", subject="an exchange",
         q=["Can I exchange my {product} for a different colour?", "The size is wrong, can I swap it?",
            "How do exchanges work?"],
         passage="Direct exchanges are not offered. Return the item under Orders > Return an item and place a "
                 "new order; the refund follows the usual timeline.",
         reference="We don't do direct exchanges: return the item under Orders > Return an item and place a new "
                   "order.",
         must_have=["Direct exchanges are not offered", "Return the item and place a new order"],
         wrong_if=["Offers a direct swap"],
         fab="We'll hold the new size for you for {days} days.",
         stray="Popular colours tend to sell out quickly."),
    dict(cls="subscriptions", subject="cancelling a subscription",
         q=["How do I cancel my {plan} subscription?", "I want to stop being charged for {plan}.",
            "If I cancel now, do I lose access right away?"],
         passage="Subscriptions are cancelled under Settings > Billing > Subscription. Access continues until "
                 "the end of the paid period; no partial refunds are given for unused days.",
         reference="Cancel under Settings > Billing > Subscription; you keep access until the end of the paid "
                   "period, and unused days are not refunded.",
         must_have=["Cancel under Settings > Billing > Subscription", "Access lasts until the period ends",
                    "No partial refunds"],
         wrong_if=["Promises a prorated refund"],
         fab="Cancelling within {hours} hours of renewal refunds the whole period.",
         stray="Many customers pause instead of cancelling."),
    dict(cls="subscriptions", subject="changing plans",
         q=["How do I upgrade from {plan} to {plan2}?", "Can I downgrade my plan mid-cycle?",
            "What happens to my bill if I switch to {plan2}?"],
         passage="Plans are changed under Settings > Billing > Subscription. Upgrades apply at once with a "
                 "prorated charge; downgrades take effect at the next renewal.",
         reference="Switch under Settings > Billing > Subscription: upgrades apply now with a prorated charge, "
                   "downgrades at the next renewal.",
         must_have=["Upgrades apply immediately, prorated", "Downgrades apply at next renewal"],
         wrong_if=["Says downgrades are refunded immediately"],
         fab="Upgrading also doubles your storage for free for {count} months.",
         stray="Most teams upgrade when they add a {count}rd member."),
    dict(cls="subscriptions", subject="a free trial",
         q=["Will I be charged when my trial ends?", "How long is the {plan2} trial?",
            "Can I get a second free trial?"],
         passage="The trial lasts {window} days. A reminder is emailed {days} days before it ends, and the "
                 "card on file is charged on the last day unless the trial is cancelled. One trial per account.",
         reference="The trial is {window} days; you get a reminder {days} days before the end and are charged "
                   "on the last day unless you cancel. One trial per account.",
         must_have=["Trial lasts {window} days", "Charged at the end unless cancelled"],
         wrong_if=["Says no card is charged automatically"],
         fab="You can extend the trial once by emailing support.",
         stray="Trials convert better when people use them early."),
]

UNANSWERABLE_QUESTIONS = [
    ("Can I pay for my {plan} plan with cryptocurrency?", "paying with cryptocurrency"),
    ("Do you ship to Antarctica research stations?", "shipping to research stations"),
    ("Can I transfer my {plan} subscription to my brother?", "transferring a subscription to someone else"),
    ("Is there a student discount on the {plan2} plan?", "student discounts"),
    ("Can you gift-wrap my {product}?", "gift wrapping"),
    ("Does your warehouse accept drop-off returns in person?", "in-person returns"),
]
UNANSWERABLE_MUST_HAVE = ["Says the help articles do not cover this", "Offers to hand over to a support agent"]
UNANSWERABLE_WRONG_IF = ["Invents a policy"]

GREETINGS_OK = ["Thanks for reaching out!", "Happy to help with this.", "Good question.", ""]
GREETINGS_RUDE = ["As our policy clearly states,", "Obviously,", "Like it says on the site,"]
CLOSINGS_OK = ["Let me know if anything else comes up.", "Hope that helps!", "Anything else I can do?", ""]
CLOSINGS_RUDE = ["That's all there is to it.", "Please read the help pages next time."]
OVER_REFUSAL = "I can't fully confirm this, so please double-check with support."
NOTE = "I couldn't find anything in the articles about {side}, so I've left that part out."
NOTE_SIDES = ["weekend processing", "gift orders", "business accounts", "orders placed by phone"]

REASONS = {  # criterion -> (pass reasons, fail reasons); {s} is the item's subject
    "answers_question": (["The reply addresses {s}, which is what was asked.",
                          "Directly answers the question about {s}."],
                         ["The reply talks around {s} without answering the question.",
                          "Answers a different question than the one about {s}."]),
    "grounded": (["Every claim matches the passage.", "Statements about {s} follow the article."],
                 ["Includes claims about {s} that the passage does not support.",
                  "Goes beyond what the article says."]),
    "cites_source": (["Names the article it relies on.", "Cites the passage by its id."],
                     ["No source is named.", "Does not point to the article it used."]),
    "no_fabrication": (["No invented details.", "Nothing about {s} is made up."],
                       ["Invents a detail about {s} that appears nowhere.", "States a policy that does not exist."]),
    "refuses_when_unanswerable": (["Declines or answers appropriately for what the articles cover.",
                                   "Handles coverage correctly."],
                                  ["Answers although the articles do not cover it, or declines needlessly.",
                                   "Wrong call on whether to decline."]),
    "on_tone": (["Polite and helpful.", "Friendly, professional tone."],
                ["Curt or condescending.", "Tone is dismissive."]),
}
CARRYOVER_REASONS = ["Given the problems above, this also falls short.", "Same issue as the previous point.",
                     "Fails for the reasons already noted."]

CRITERION_TEXT = {
    "answers_question": "Does the answer address the customer's actual question?",
    "grounded": "Is every claim supported by the provided passages?",
    "cites_source": "Does the answer name or quote the passage it relied on (e.g. [doc-12])?",
    "no_fabrication": "Is the answer free of invented facts, policies or numbers?",
    "refuses_when_unanswerable": "Does it decline when the passages cannot answer, and only then?",
    "on_tone": "Is the tone polite, calm and professional?",
}

JUDGE_SYSTEM = ("You grade one customer-support answer. Read the question, the help-article passages and the "
                "answer. For every criterion write a one-sentence reason, then a verdict.")
JUDGE_TEMPLATE = (JUDGE_SYSTEM + "\n\nQuestion:\n{input}\n\nPassages:\n{context}\n\nAnswer:\n{output}\n\n"
                  "Criteria:\n{criteria_block}\n{variant_line}\nReturn JSON: for each criterion in the order "
                  "listed, {{\"reason\": ..., \"verdict\": \"pass\" | \"fail\"}}.")
INDEPENDENT_LINE = "Evaluate each criterion independently of the others.\n"

# accounts suite
ACCOUNT_TOPICS: list[dict[str, Any]] = [
    dict(title="Resetting your password", q="How do I reset my password on {device}?",
         steps=["Open the sign-in page and choose 'Forgot password'.", "Enter the email you signed up with.",
                "Open the reset email and follow the link within {hours} hours.",
                "Pick a new password of at least {n} characters.", "Sign in again on {device}.",
                "Sign out of other devices from Settings > Security if you like."]),
    dict(title="Turning on two-step sign-in", q="How do I turn on two-step sign-in for my {plan} account?",
         steps=["Go to Settings > Security.", "Choose 'Two-step sign-in' and scan the code with an authenticator app.",
                "Type the six-digit code to confirm.", "Save the backup codes somewhere safe.",
                "Sign in once more to check it works.", "Repeat on any other admin accounts."]),
    dict(title="Changing your sign-in email", q="How can I change the email address on my account?",
         steps=["Open Settings > Profile.", "Enter the new email address and save.",
                "Click the confirmation link sent to the new address.", "Sign in with the new address from now on.",
                "Check the old inbox for the change notice.", "Update saved logins on {device}."]),
    dict(title="Adding a team member", q="How do I add a colleague to our {plan} workspace?",
         steps=["Open Settings > Members.", "Choose 'Invite' and enter their work email.",
                "Pick a role: member or admin.", "They accept the invite within {days} days.",
                "Seats are billed from the day they join.", "Remove people from the same page."]),
    dict(title="Exporting your data", q="Can I download all of my account data?",
         steps=["Open Settings > Privacy.", "Choose 'Export my data'.", "Pick the format you want.",
                "Wait for the email, usually within {hours} hours.", "Download the archive within {days} days.",
                "Keep the file somewhere private."]),
    dict(title="Transferring billing ownership", q="How do I make someone else the billing owner of our account?",
         steps=["The current owner opens Settings > Billing.", "Choose 'Transfer ownership'.",
                "Select an existing admin.", "The new owner confirms by email.",
                "Invoices from the next period go to the new owner.", "Update the card on file if needed."]),
    dict(title="Unlocking a locked account", q="My account got locked after too many attempts on {device}. What now?",
         steps=["Wait {n} minutes for the lock to clear.", "Use 'Forgot password' if you are unsure of it.",
                "Sign in from a device you used before.", "Check Settings > Security for unknown sign-ins.",
                "Turn on two-step sign-in afterwards.", "Contact support if the lock stays."]),
    dict(title="Merging two accounts", q="I have two accounts with different emails. Can they be merged?",
         steps=["Decide which account to keep.", "Export anything you need from the other one.",
                "Cancel any subscription on the account you will close.",
                "Close it under Settings > Privacy.", "Add the freed email to the kept account if you want.",
                "Past orders stay with the closed account's export."]),
]
ACCOUNT_SLOTS = {"device": ["the iPhone app", "the Android app", "the web app", "a shared laptop"],
                 "plan": ["Basic", "Plus", "Pro", "Team"], "hours": [2, 24, 48], "n": [10, 12, 15, 30],
                 "days": [3, 7, 14]}
ACCOUNT_EXTRAS = [
    "If the page looks different, make sure the app is up to date.",
    "Changes usually show up on every device within a few minutes.",
    "Admins on the {plan} plan can do this for other members as well.",
    "You will get an email confirming the change, so keep an eye on your inbox.",
    "Nothing you have already saved is lost along the way.",
    "If you use a password manager, update the saved entry afterwards.",
    "This works the same way on the web and in the mobile apps.",
    "For shared workspaces, let your teammates know before you start.",
    "If something fails, signing out and back in often clears it.",
    "Support can help if a step does not match what you see.",
    "The confirmation email can take a little while during busy hours.",
    "Check the spam folder if nothing has arrived after a few minutes.",
    "Links in our emails expire after {hours} hours for your safety.",
    "You can repeat the steps as often as you need to.",
    "A browser extension that blocks pop-ups can hide the confirmation window.",
    "On {device} the same option sits under the menu in the top corner.",
    "Your billing details are not affected by this change.",
    "Members of your workspace keep their own settings throughout.",
    "We never ask for your password by email or chat.",
    "If you manage several accounts, do them one at a time to avoid mix-ups.",
    "The activity log under Settings > Security records every change you make.",
    "It is worth writing down the date you made the change.",
    "Older versions of the app may show slightly different labels.",
    "If your company uses single sign-on, your IT team may need to help.",
    "A stable connection avoids having to start again halfway through.",
    "Private browsing windows sometimes lose the session part way through.",
    "You can undo most of these changes from the same page.",
    "The help centre has screenshots of each screen if you want to follow along.",
    "Accounts on the {plan} plan get priority replies from support.",
    "Time zones can make the email timestamps look a little odd.",
    "For security, you may be asked to sign in again before saving.",
    "Two-step sign-in codes change every thirty seconds, so type them promptly.",
    "If the button is greyed out, an admin may have turned the option off.",
    "Clearing the browser cache can fix a page that will not load.",
    "Keep your recovery email current so you can always get back in.",
    "Most people finish all of this in under five minutes.",
]
ACCOUNT_SECTIONS = ["Before you start", "Steps", "If something goes wrong", "Good to know"]
ACCOUNT_BAIL = ("I'm sorry, I couldn't find enough in the account help articles to answer this reliably. "
                "Please contact support so an agent can check your account.")
ACCOUNT_INTROS = ["Here is how to do it.", "You can do this yourself in a few steps.", "This takes a minute."]
ACCOUNT_CRITERIA = ("answers_question", "accurate", "concise")


# --------------------------------------------------------------------------- small helpers


class _Cols:
    """Collects rows column-wise and turns them into an arrow table in the contract's schema."""

    def __init__(self, table: str):
        self.table = table
        self.schema = S.arrow_schema(S.TABLES[table][0])
        self.cols: dict[str, list] = {f.name: [] for f in self.schema}
        self.n = 0

    def add(self, **row: Any) -> None:
        for name, values in self.cols.items():
            values.append(row.pop(name, None))
        if row:
            raise KeyError(f"unknown columns for {self.table}: {sorted(row)}")
        self.n += 1

    def arrow(self) -> pa.Table:
        model = S.TABLES[self.table][0]
        defaults = {(i.alias or k): i.default for k, i in model.model_fields.items()
                    if not i.is_required() and i.default is not None}
        arrays = []
        for f in self.schema:
            vals = self.cols[f.name]
            if f.name in defaults:
                vals = [defaults[f.name] if v is None else v for v in vals]
            arrays.append(pa.array(vals, f.type))
        return pa.Table.from_arrays(arrays, schema=self.schema)


def _fill(template: str, slots: dict[str, Any]) -> str:
    return template.format(**slots)


def _pick(rng: np.random.Generator, seq: list) -> Any:
    return seq[int(rng.integers(len(seq)))]


def _totals(calls: _Cols) -> S.Totals:
    """Manifest totals computed from the calls table."""
    c = calls.cols
    n = calls.n
    if n == 0:
        return S.Totals()
    failed = sum(1 for e in c["error"] if e)
    lat = np.array([x for x in c["latency_ms"] if x is not None], dtype=float)
    cost = [x for x in c["cost_usd"] if x is not None]
    return S.Totals(
        calls=n, failed_calls=failed,
        tokens_in=int(sum(x for x in c["tokens_in"] if x is not None)),
        tokens_out=int(sum(x for x in c["tokens_out"] if x is not None)),
        cost_usd=round(float(sum(cost)), 6) if cost else None,
        latency_ms_mean=round(float(lat.mean()), 1) if lat.size else None,
        latency_ms_p95=round(float(np.percentile(lat, 95)), 1) if lat.size else None)


def _words(text: str | None) -> int:
    return len(text.split()) if text else 0


# --------------------------------------------------------------------------- support: truth and items


def support_truth(seed: int, n: int = N_SUPPORT_ITEMS) -> np.ndarray:
    """True FAIL flags, shape (n, 6) in CRITERIA order. grounded and no_fabrication are drawn
    jointly (no_fabrication fails far more often when the answer is ungrounded); every other
    criterion is an independent coin with its TRUTH_FAIL rate. The (grounded, no_fabrication)
    cells have exact counts (71 / 43 / 36 / 450 of 600; phi 0.56), assigned to items at random."""
    rng = _rng(seed, "support-truth")
    fail = np.zeros((n, len(CRITERIA)), dtype=bool)
    for j, c in enumerate(CRITERIA):
        if c in TRUTH_FAIL:
            fail[:, j] = rng.random(n) < TRUTH_FAIL[c]
    # exact cell counts, seeded assignment: the suite's phi is the designed one, not a lucky draw
    n_g = int(round(P_GROUNDED_FAIL * n))
    n_both = int(round(P_NOFAB_FAIL_IF_UNGROUNDED * n_g))
    n_nf_only = int(round(P_NOFAB_FAIL_IF_GROUNDED * (n - n_g)))
    perm = rng.permutation(n)
    g = np.zeros(n, dtype=bool)
    nf = np.zeros(n, dtype=bool)
    g[perm[:n_g]] = True
    nf[perm[:n_both]] = True
    nf[perm[n_g:n_g + n_nf_only]] = True
    fail[:, CRITERIA.index("grounded")] = g
    fail[:, CRITERIA.index("no_fabrication")] = nf
    return fail


def _slots(rng: np.random.Generator) -> dict[str, Any]:
    s = {k: _pick(rng, v) for k, v in SLOTS.items()}
    s["order"] = f"#{int(rng.integers(100000, 999999))}"
    s["amount2"] = _pick(rng, SLOTS["amount"])
    return s


def support_items(seed: int, fail: np.ndarray) -> tuple[list[dict], list[dict]]:
    """The 600 items (ItemRow dicts) and, per item, what the simulator needs to write answers
    (topic, slots, doc ids, whether it is unanswerable, whether its answer carries a note)."""
    rng = _rng(seed, "support-items")
    n = fail.shape[0]
    doc_of_topic = {t: f"doc-{11 + 3 * t}" for t in range(len(TOPICS))}
    holdout = np.zeros(n, dtype=bool)
    holdout[rng.choice(n, int(round(HOLDOUT_SHARE * n)), replace=False)] = True
    unanswerable = rng.random(n) < UNANSWERABLE_SHARE
    items, info = [], []
    for i in range(n):
        s = _slots(rng)
        topic = int(rng.integers(len(TOPICS)))
        other = (topic + 1 + int(rng.integers(len(TOPICS) - 1))) % len(TOPICS)
        t, o = TOPICS[topic], TOPICS[other]
        difficulty = _pick(rng, ["easy", "easy", "medium", "medium", "hard"])
        if unanswerable[i]:
            q, subject = UNANSWERABLE_QUESTIONS[int(rng.integers(len(UNANSWERABLE_QUESTIONS)))]
            question = _fill(q, s)
            context = (f"[{doc_of_topic[topic]}] {_fill(t['passage'], s)}\n\n"
                       f"[{doc_of_topic[other]}] {_fill(o['passage'], s)}")
            reference = f"Our help articles don't cover {subject}; I can pass this to a support agent."
            must_have, wrong_if, expected = list(UNANSWERABLE_MUST_HAVE), list(UNANSWERABLE_WRONG_IF), []
            cls = t["cls"]
            difficulty = "hard"
        else:
            subject = t["subject"]
            question = _fill(_pick(rng, t["q"]), s)
            docs = [(doc_of_topic[topic], t), (doc_of_topic[other], o)]
            if rng.random() < 0.5:
                docs.reverse()
            context = "\n\n".join(f"[{d}] {_fill(tt['passage'], s)}" for d, tt in docs)
            reference = _fill(t["reference"], s)
            must_have = [_fill(m, s) for m in t["must_have"]]
            wrong_if = [_fill(w, s) for w in t["wrong_if"]]
            expected = [doc_of_topic[topic]]
            cls = t["cls"]
        items.append({"item_id": f"sup-{i + 1:04d}", "input": question, "context": context,
                      "reference": reference, "must_have": must_have, "wrong_if": wrong_if,
                      "expected_doc_ids": expected, "class": cls, "difficulty": difficulty,
                      "holdout": bool(holdout[i])})
        info.append({"topic": topic, "other": other, "slots": s, "subject": subject,
                     "doc": doc_of_topic[topic], "other_doc": doc_of_topic[other],
                     "unanswerable": bool(unanswerable[i])})
    # the honest trailing note (which the buggy post-processing later mistakes for a bail):
    # only on answered items whose answer is on topic
    aq = fail[:, CRITERIA.index("answers_question")]
    eligible = np.flatnonzero(~unanswerable & ~aq)
    noted = rng.choice(eligible, int(round(NOTE_SHARE * n)), replace=False)
    for i in range(n):
        info[i]["note"] = False
    for i in noted:
        info[i]["note"] = True
    return items, info


def write_support_suite(store: Store, items: list[dict]) -> S.SuiteManifest:
    m = S.SuiteManifest(
        suite_id=SUPPORT, created_at=_at(0), content_hash=S.suite_hash(items), n_items=len(items),
        description="SIMULATED customer-support questions (billing, shipping, account, returns, "
                    "subscriptions) with help-article passages, reference answers, must-have and "
                    "wrong-if statements. Made by evalcore's seeded simulator; no real customer wrote them.",
        curated=False, simulated=True, source=SOURCE)
    store.write_suite(m, items, overwrite=True)
    return m


# --------------------------------------------------------------------------- support: generation


def _join(parts: list[str]) -> str:
    """Sentences joined with spaces; a part after a trailing comma starts in lower case."""
    parts = [x for x in parts if x]
    for k in range(1, len(parts)):
        if parts[k - 1].endswith(","):
            parts[k] = parts[k][:1].lower() + parts[k][1:]
    return " ".join(parts)


def _support_answer(rng: np.random.Generator, item: dict, info: dict, fails: dict[str, bool]) -> tuple[str, bool]:
    """An answer consistent with the item's truth where that is cheap to express in text.
    Returns (text, abstained)."""
    s, t = info["slots"], TOPICS[info["topic"]]
    rude = fails["on_tone"]
    greet = _pick(rng, GREETINGS_RUDE if rude else GREETINGS_OK)
    close = _pick(rng, CLOSINGS_RUDE if rude else CLOSINGS_OK)
    if info["unanswerable"] and not fails["refuses_when_unanswerable"]:
        body = (f"Sorry, our help articles don't cover {info['subject']}. I can hand this over to a support "
                f"agent who can check for you.")
        return _join([greet, body]), True
    parts = [greet]
    if info["unanswerable"]:  # should have declined; answers with a confident guess instead
        ref = _fill(t["reference"], s)
        parts.append(f"Yes, that's possible: {ref[:1].lower() + ref[1:]}")
    elif fails["answers_question"]:
        parts.append(_fill(TOPICS[info["other"]]["reference"], s))
    else:
        parts.append(item["reference"])
    if not fails["cites_source"]:
        parts[-1] = parts[-1].rstrip(".") + f" [{info['doc']}]."
    if fails["grounded"]:
        parts.append(t["stray"].format(**s))
    if fails["no_fabrication"]:
        parts.append(_fill(t["fab"], s))
    if fails["refuses_when_unanswerable"] and not info["unanswerable"]:
        parts.append(OVER_REFUSAL)
    if info.get("note"):
        parts.append(NOTE.format(side=_pick(rng, NOTE_SIDES)))
    parts.append(close)
    return _join(parts), False


def write_support_generation(store: Store, seed: int, suite: S.SuiteManifest, items: list[dict],
                             info: list[dict], fail: np.ndarray) -> tuple[S.GenerationManifest, list[dict]]:
    """`support-g1`: one generation round over the support suite."""
    rng = _rng(seed, "support-g1")
    out = _Cols("outputs")
    outputs = []
    for i, item in enumerate(items):
        fails = {c: bool(fail[i, j]) for j, c in enumerate(CRITERIA)}
        text, abstained = _support_answer(rng, item, info[i], fails)
        tin = int(220 + 1.3 * _words(item["input"]) + 1.3 * _words(item["context"]) + rng.integers(0, 40))
        tout = int(1.35 * _words(text) + rng.integers(2, 12))
        retrieved = [info[i]["doc"], info[i]["other_doc"]]
        if rng.random() >= 0.85:  # retrieval ranks the distractor first now and then
            retrieved.reverse()
        row = dict(item_id=item["item_id"], round=1, output=text, abstained=abstained,
                   retrieved_doc_ids=retrieved, tokens_in=tin, tokens_out=tout,
                   cost_usd=round((tin * 0.15 + tout * 0.6) / 1e6, 8),
                   latency_ms=round(float(350 + 18 * tout + rng.lognormal(5.0, 0.5)), 1))
        out.add(**row)
        outputs.append(row)
    lat = np.array(out.cols["latency_ms"])
    m = S.GenerationManifest(
        gen_id="support-g1", suite_id=SUPPORT, suite_hash=suite.content_hash, created_at=_at(1),
        knobs={"generator_model": "simulated/writer-gamma-2025-05-20", "temperature": 0.3,
               "writer_prompt_hash": S.text_hash("support writer v3"), "revision_budget": 0,
               "token_budget": 400, "corpus_snapshot": "help-center-2025-12", "retrieval": "bm25 top-2",
               "description": "SIMULATED answers written by evalcore's simulator"},
        rounds=1, status="complete", source=SOURCE,
        outputs_hash=S.outputs_hash(outputs),
        totals=S.Totals(calls=out.n, tokens_in=int(sum(out.cols["tokens_in"])),
                        tokens_out=int(sum(out.cols["tokens_out"])),
                        cost_usd=round(float(sum(out.cols["cost_usd"])), 6),
                        latency_ms_mean=round(float(lat.mean()), 1),
                        latency_ms_p95=round(float(np.percentile(lat, 95)), 1)),
        simulated=True)
    store.write_generation(m, out.arrow(), overwrite=True)
    return m, outputs


# --------------------------------------------------------------------------- support: judges


def judge_readings(seed: int, judge: dict, fail: np.ndarray, rounds: int) -> np.ndarray:
    """A judge's own reading of every (item, judge round, criterion) as FAIL flags, shape
    (n, rounds, 6): the truth with a few fixed misreadings (the judge misses some failures and
    invents a few), except borderline cells, which are a fresh coin in every round."""
    rng = _rng(seed, "reading", judge["model"])
    n, k = fail.shape
    miss = rng.random((n, k)) < judge["miss_fail"]
    false = rng.random((n, k)) < judge["false_fail"]
    fixed = np.where(fail, ~miss, false)
    weight = np.array([BORDERLINE_WEIGHT[c] for c in CRITERIA])
    borderline = rng.random((n, k)) < judge["borderline"] * weight
    coins = rng.random((n, rounds, k)) < 0.5
    return np.where(borderline[:, None, :], coins, fixed[:, None, :])


def carryover_draws(seed: int, judge: dict, n: int, k: int) -> np.ndarray:
    """One uniform per item and emission position, fixed across judge rounds (and harnesses of
    the same judge): the carryover fires when it is below c_k."""
    return _rng(seed, "carryover", judge["model"]).random((n, k))


def emit(reading: np.ndarray, calls: list[list[str]], carry: tuple[float, ...], u: np.ndarray,
         scale: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Turn readings (n, rounds, 6; CRITERIA order) into emitted FAIL flags for a harness whose
    calls hold the given criteria in emission order. Within a call, after a failed field the next
    field is forced to fail when u < scale * c_k (k = position in the call). Returns (emitted fail,
    forced, position), each (n, rounds, 6) / (6,) in CRITERIA order."""
    out = reading.copy()
    forced = np.zeros_like(reading)
    position = np.zeros(len(CRITERIA), dtype=int)
    for crits in calls:
        for k, c in enumerate(crits):
            j = CRITERIA.index(c)
            position[j] = k if len(crits) > 1 else 0
            if k == 0:
                continue
            prev = out[:, :, CRITERIA.index(crits[k - 1])]
            fire = (u[:, k] < scale * carry[k])[:, None]
            push = prev & fire & ~reading[:, :, j]
            out[:, :, j] |= push
            forced[:, :, j] = push
    return out, forced, position


def _rubric_binary() -> S.Rubric:
    return S.Rubric(name="support-6", criteria=[
        S.Criterion(name=c, kind="binary", description=CRITERION_TEXT[c],
                    gate=c in ("no_fabrication",),
                    group=next(f"g{gi + 1}" for gi, g in enumerate(GROUPS) if c in g)) for c in CRITERIA])


def _judge_tokens(rng: np.random.Generator, item: dict, output: str, n_crit: int) -> tuple[int, int]:
    tin = int(180 + 1.3 * (_words(item["input"]) + _words(item.get("context")) + _words(output)) + 45 * n_crit
              + rng.integers(0, 25))
    tout = int(n_crit * (28 + rng.integers(0, 14)) + 12)
    return tin, tout


def _call_row(rng, judge, run_id, call_no, item, output, gen_round, judge_round, crits, tpl_hash, hours,
              error: str | None = None) -> dict:
    tin, tout = _judge_tokens(rng, item, output, len(crits))
    latency = float(400 + 11 * tout + rng.lognormal(5.3, 0.45))
    row = dict(call_id=f"{run_id}-c{call_no:06d}", item_id=item["item_id"], gen_round=gen_round,
               judge_round=judge_round, criteria=list(crits), model=judge["reported"],
               prompt_hash=S.text_hash(f"{tpl_hash}|{item['item_id']}|{gen_round}|{','.join(crits)}"),
               tokens_in=tin, tokens_out=tout,
               cost_usd=round((tin * judge["price_in"] + tout * judge["price_out"]) / 1e6, 8),
               latency_ms=round(latency, 1), attempts=1, cache_hit=False, error=None,
               started_at=_at(hours) + timedelta(milliseconds=int(call_no) * 137))
    if error:
        row.update(tokens_in=None, tokens_out=None, cost_usd=None, attempts=3, error=error,
                   latency_ms=round(latency * 6, 1))
    return row


def _reason(rng: np.random.Generator, c: str, failed: bool, forced: bool, subject: str) -> str:
    if forced:
        return _pick(rng, CARRYOVER_REASONS)
    return _pick(rng, REASONS[c][1 if failed else 0]).format(s=subject)


def _template(mode: str, variant: str) -> str:
    return JUDGE_TEMPLATE.replace("{variant_line}", INDEPENDENT_LINE if variant == "independent" else "") + \
        f"\n[harness: {mode}]"


def write_binary_run(store: Store, seed: int, run_id: str, judge: dict, mode: str, calls_spec: list[list[str]],
                     emitted: np.ndarray, forced: np.ndarray, position: np.ndarray, items: list[dict],
                     info: list[dict], outputs: list[dict], *, item_idx: Iterable[int] | None = None,
                     rounds: int = JUDGE_ROUNDS, variant: str = "default", status: str = "complete",
                     fail_share: float = 0.0, description: str = "", hours: float = 2,
                     knobs: dict | None = None) -> dict:
    """Write verdicts, calls and manifest of one binary six-criterion run from emitted FAIL flags
    (n, rounds, 6). `item_idx` restricts the run to some items; `fail_share` makes that share of
    calls fail after every retry (their verdicts errored, passed null)."""
    rng = _rng(seed, "run", run_id)
    tpl = _template(mode, variant)
    tpl_hash = S.text_hash(tpl)
    idx = list(range(len(items))) if item_idx is None else list(item_idx)
    v, c = _Cols("verdicts"), _Cols("calls")
    failed_ids: list[str] = []
    call_no = 0
    for i in idx:
        item, out = items[i], outputs[i]
        for r in range(rounds):
            for crits in calls_spec:
                call_no += 1
                err = None
                if fail_share and rng.random() < fail_share:
                    err = _pick(rng, ["timeout after 3 attempts", "rate limited (429) after 3 attempts",
                                      "unparseable JSON after 3 attempts"])
                row = _call_row(rng, judge, run_id, call_no, item, out["output"], 1, r + 1, crits, tpl_hash,
                                hours, err)
                c.add(**row)
                if err:
                    failed_ids.append(row["call_id"])
                for c_name in crits:
                    j = CRITERIA.index(c_name)
                    f = bool(emitted[i, r, j])
                    if err:
                        v.add(run_id=run_id, item_id=item["item_id"], gen_round=1, criterion=c_name,
                              judge_round=r + 1, passed=None, raw_verdict=None, reason=None,
                              position=int(position[j]), call_id=row["call_id"], error=err)
                        continue
                    v.add(run_id=run_id, item_id=item["item_id"], gen_round=1, criterion=c_name,
                          judge_round=r + 1, passed=not f, raw_verdict="fail" if f else "pass",
                          reason=_reason(rng, c_name, f, bool(forced[i, r, j]), info[i]["subject"]),
                          position=int(position[j]), call_id=row["call_id"])
    rubric = _rubric_binary()
    if failed_ids and status == "complete":
        status = "polluted"
    field_order = [x for crits in calls_spec for x in crits] if mode != "split" else list(CRITERIA)
    m = S.RunManifest(
        run_id=run_id, gen_id="support-g1", created_at=_at(hours), rubric=rubric, rubric_hash=rubric.hash(),
        mode=mode, groups=[list(g) for g in calls_spec] if mode == "grouped" else None,
        field_order=field_order, prompt_variant=variant, judge_model=judge["model"],
        judge_family=judge["family"], temperature=0.0, seed=None, prompt_template=tpl, prompt_hash=tpl_hash,
        postprocess_version="pp-1.0", retry_policy={"max_retries": 2, "backoff": "exponential", "timeout_s": 60},
        structured_output="json_schema", reuse_cache=False, cache_hits=0, judge_rounds=rounds, source=SOURCE,
        status=status, failed_call_ids=failed_ids, totals=_totals(c), knobs=dict(knobs or {}),
        price_map_version=PRICE_MAP_VERSION, simulated=True, description=description)
    store.write_run(m, v.arrow(), c.arrow(), overwrite=True)
    return {"verdicts": v.n, "calls": c.n}


def write_support_judged_runs(store: Store, seed: int, items, info, outputs, fail) -> dict:
    """The six-criterion runs over `support-g1`: single, single-indep, grouped, split (judge A),
    split with judge B, and the small polluted and partial runs."""
    n = len(items)
    read_a = judge_readings(seed, JUDGE_A, fail, JUDGE_ROUNDS)
    read_b = judge_readings(seed, JUDGE_B, fail, JUDGE_ROUNDS)
    u = carryover_draws(seed, JUDGE_A, n, len(CRITERIA))
    single = [SINGLE_FIELD_ORDER]
    split = [[c] for c in CRITERIA]
    counts = {"verdicts": 0, "calls": 0}

    def add(d):
        counts["verdicts"] += d["verdicts"]
        counts["calls"] += d["calls"]

    sim = "SIMULATED: made by evalcore's seeded simulator, not by a real judge. "
    e, f, p = emit(read_a, single, CARRYOVER, u)
    add(write_binary_run(store, seed, "support-single", JUDGE_A, "single", single, e, f, p, items, info, outputs,
                         hours=2, description=sim + "One call per answer returns all six criteria in a fixed "
                         "field order; later fields lean on the ones already written."))
    e, f, p = emit(read_a, single, CARRYOVER, u, scale=INDEPENDENT_SCALE)
    add(write_binary_run(store, seed, "support-single-indep", JUDGE_A, "single", single, e, f, p, items, info,
                         outputs, variant="independent", hours=3,
                         description=sim + "Single call with an 'evaluate each criterion independently' "
                         "instruction; barely different from the plain single call."))
    # grouped: carryover only inside each group's call (positions within the group)
    ug = u[:, :len(GROUP_CARRYOVER)]
    e, f, p = emit(read_a, GROUPS, GROUP_CARRYOVER, ug)
    add(write_binary_run(store, seed, "support-grouped", JUDGE_A, "grouped", GROUPS, e, f, p, items, info,
                         outputs, hours=4, description=sim + "One call per group of related criteria."))
    e, f, p = emit(read_a, split, CARRYOVER, u)
    add(write_binary_run(store, seed, "support-split", JUDGE_A, "split", split, e, f, p, items, info, outputs,
                         hours=5, description=sim + "One call per criterion: no verdict is written with "
                         "another in front of it."))
    e, f, p = emit(read_b, split, CARRYOVER, u)
    add(write_binary_run(store, seed, "support-split-judgeB", JUDGE_B, "split", split, e, f, p, items, info,
                         outputs, hours=6, description=sim + "One call per criterion with a second, cheaper "
                         "and more lenient judge model."))
    rng = _rng(seed, "support-small-runs")
    polluted_idx = sorted(rng.choice(n, N_POLLUTED_ITEMS, replace=False).tolist())
    e, f, p = emit(read_a[:, :1], split, CARRYOVER, u)
    add(write_binary_run(store, seed, "support-polluted", JUDGE_A, "split", split, e, f, p, items, info, outputs,
                         item_idx=polluted_idx, rounds=1, fail_share=POLLUTED_FAIL_SHARE, hours=7,
                         description=sim + f"A small split run over {N_POLLUTED_ITEMS} items in which some "
                         "calls still failed after every retry: the run is polluted."))
    partial_idx = sorted(rng.choice(n, N_PARTIAL_ITEMS, replace=False).tolist())
    add(write_binary_run(store, seed, "support-partial", JUDGE_B, "split", split, *emit(read_b[:, :1], split,
                         CARRYOVER, u), items, info, outputs, item_idx=partial_idx, rounds=1, status="partial",
                         hours=8, knobs={"planned_items": n, "judged_items": N_PARTIAL_ITEMS},
                         description=sim + f"Stopped early: only {N_PARTIAL_ITEMS} of {n} items were judged."))
    counts["runs"] = 7
    return counts


def support_ternary_truth(seed: int, fail: np.ndarray, info: list[dict]) -> list[tuple[str, list[int], bool]]:
    """Per item: (true label, indices of must_have items covered, wrong_if triggered).
    Off-topic answers are wrong; a fabricated answer trips its wrong-if half the time; otherwise
    an answer misses one must-have now and then (partial)."""
    rng = _rng(seed, "support-ternary-truth")
    out = []
    aq, nf = fail[:, CRITERIA.index("answers_question")], fail[:, CRITERIA.index("no_fabrication")]
    ref = fail[:, CRITERIA.index("refuses_when_unanswerable")]
    for i in range(fail.shape[0]):
        k = len(TOPICS[info[i]["topic"]]["must_have"]) if not info[i]["unanswerable"] else 2
        allc = list(range(k))
        if info[i]["unanswerable"]:
            out.append(("correct", allc, False) if not ref[i] else ("wrong", [], True))
        elif aq[i]:
            out.append(("wrong", [] if rng.random() < 0.6 else [0], False))
        elif nf[i] and rng.random() < 0.5:
            out.append(("wrong", allc, True))
        elif rng.random() < 0.15:
            miss = int(rng.integers(k))
            out.append(("partial", [x for x in allc if x != miss], False))
        else:
            out.append(("correct", allc, False))
    return out


def write_support_ternary(store: Store, seed: int, items, info, outputs, fail) -> dict:
    """`support-ternary`: correct/partial/wrong against must_have / wrong_if, post-processed by a
    buggy rule that forces `wrong` whenever the answer contains a "couldn't find" phrase, even
    when the judge said correct and listed every must-have as covered."""
    rng = _rng(seed, "support-ternary")
    truth = support_ternary_truth(seed, fail, info)
    run_id = "support-ternary"
    crit = S.Criterion(name="correctness", kind="ternary",
                       description="Correct if every must-have is covered and no wrong-if is triggered; "
                                   "partial if some must-have is missed; wrong otherwise.")
    rubric = S.Rubric(name="support-ternary", criteria=[crit])
    tpl = ("Grade the answer correct, partial or wrong against the must-have and wrong-if lists. Return "
           "reason, verdict, covered, missed, triggered.\n\nQuestion:\n{input}\n\nMust have:\n{must_have}\n\n"
           "Wrong if:\n{wrong_if}\n\nAnswer:\n{output}")
    tpl_hash = S.text_hash(tpl)
    v, c = _Cols("verdicts"), _Cols("calls")
    order = list(S.TERNARY_LABELS)
    for i, item in enumerate(items):
        label, cov, trig = truth[i]
        raw = label
        if rng.random() < TERNARY_NOISE:  # the judge moves one step
            k = order.index(label)
            raw = order[k + 1] if k == 0 else order[k - 1] if k == 2 else order[int(rng.integers(2)) * 2]
        mh = item["must_have"]
        if raw == "correct":
            covered, triggered = list(mh), []
        elif raw == "partial":
            covered = [mh[x] for x in cov] if len(cov) < len(mh) and cov else mh[:-1]
            triggered = []
        else:
            covered = [mh[x] for x in cov] if len(cov) < len(mh) else []
            triggered = [item["wrong_if"][0]] if trig or not covered else []
        missed = [m for m in mh if m not in covered]
        bug = bool(BUG_PATTERN.search(outputs[i]["output"]))
        derived = "wrong" if bug else raw
        reason = {"correct": "Covers every must-have point and triggers nothing on the wrong-if list.",
                  "partial": f"Misses: {missed[0] if missed else 'one point'}.",
                  "wrong": (f"Triggers: {triggered[0]}." if triggered else "Does not cover the required points.")}[raw]
        row = _call_row(rng, JUDGE_A, run_id, i + 1, item, outputs[i]["output"], 1, 1, ["correctness"], tpl_hash, 9)
        c.add(**row)
        v.add(run_id=run_id, item_id=item["item_id"], gen_round=1, criterion="correctness", judge_round=1,
              passed=derived == "correct", label=derived, raw_verdict=raw, reason=reason, covered=covered,
              missed=missed, triggered=triggered, position=0, call_id=row["call_id"])
    m = S.RunManifest(
        run_id=run_id, gen_id="support-g1", created_at=_at(9), rubric=rubric, rubric_hash=rubric.hash(),
        mode="split", field_order=["correctness"], judge_model=JUDGE_A["model"], judge_family=JUDGE_A["family"],
        temperature=0.0, prompt_template=tpl, prompt_hash=tpl_hash, postprocess_version=POSTPROCESS_BUGGY,
        retry_policy={"max_retries": 2, "backoff": "exponential", "timeout_s": 60}, structured_output="json_schema",
        judge_rounds=1, source=SOURCE, status="complete", totals=_totals(c), price_map_version=PRICE_MAP_VERSION,
        simulated=True,
        description="SIMULATED: made by evalcore's seeded simulator. Ternary correctness against must-have "
                    "items. The post-processing (pp-2.1-buggy) forces 'wrong' whenever the answer contains "
                    "\"couldn't find\", even where the judge said correct and listed every must-have as covered.")
    store.write_run(m, v.arrow(), c.arrow(), overwrite=True)
    return {"verdicts": v.n, "calls": c.n}


def write_support_ordinal(store: Store, seed: int, items, info, outputs, fail) -> dict:
    """`support-ordinal`: 0-5 scores (helpfulness pass at 3; accuracy and safety pass at 4 and are
    hard gates). Scores follow the truth: off-topic or rude answers are less helpful, ungrounded or
    fabricated ones less accurate; safety is nearly always high."""
    rng = _rng(seed, "support-ordinal")
    run_id = "support-ordinal"
    thresholds = {"helpfulness": 3, "accuracy": 4, "safety": 4}
    rubric = S.Rubric(name="support-ordinal", criteria=[
        S.Criterion(name="helpfulness", kind="ordinal", description="How useful is the answer to the customer?",
                    scale_min=0, scale_max=5, threshold=3),
        S.Criterion(name="accuracy", kind="ordinal", description="Are the facts right and supported?",
                    scale_min=0, scale_max=5, threshold=4, gate=True),
        S.Criterion(name="safety", kind="ordinal", description="Free of harmful or privacy-risking advice?",
                    scale_min=0, scale_max=5, threshold=4, gate=True)])
    tpl = "Score the answer 0-5 on {criterion}. Reason first, then the score.\n\n{input}\n\n{context}\n\n{output}"
    tpl_hash = S.text_hash(tpl)
    v, c = _Cols("verdicts"), _Cols("calls")
    col = {x: CRITERIA.index(x) for x in CRITERIA}
    call_no = 0
    for i, item in enumerate(items):
        f = fail[i]
        base = {
            "helpfulness": 4.3 - 2.3 * f[col["answers_question"]] - 1.0 * f[col["on_tone"]],
            "accuracy": 4.6 - 1.3 * f[col["grounded"]] - 1.5 * f[col["no_fabrication"]],
            "safety": 4.8 - (1.8 if rng.random() < 0.03 else 0.0),
        }
        for k, (name, mu) in enumerate(base.items()):
            call_no += 1
            score = float(np.clip(np.rint(mu + rng.normal(0, 0.6)), 0, 5))
            row = _call_row(rng, JUDGE_A, run_id, call_no, item, outputs[i]["output"], 1, 1, [name], tpl_hash, 10)
            c.add(**row)
            v.add(run_id=run_id, item_id=item["item_id"], gen_round=1, criterion=name, judge_round=1,
                  passed=score >= thresholds[name], score=score, raw_verdict=str(int(score)),
                  reason=f"Scored {int(score)} of 5 on {name} for {info[i]['subject']}.", position=0,
                  call_id=row["call_id"])
    m = S.RunManifest(
        run_id=run_id, gen_id="support-g1", created_at=_at(10), rubric=rubric, rubric_hash=rubric.hash(),
        mode="split", field_order=rubric.names(), judge_model=JUDGE_A["model"], judge_family=JUDGE_A["family"],
        temperature=0.0, prompt_template=tpl, prompt_hash=tpl_hash, postprocess_version="pp-1.0",
        retry_policy={"max_retries": 2, "backoff": "exponential", "timeout_s": 60}, structured_output="json_schema",
        judge_rounds=1, source=SOURCE, status="complete", totals=_totals(c), price_map_version=PRICE_MAP_VERSION,
        simulated=True,
        description="SIMULATED: made by evalcore's seeded simulator. Ordinal 0-5 scores with pass thresholds; "
                    "accuracy and safety are hard gates.")
    store.write_run(m, v.arrow(), c.arrow(), overwrite=True)
    return {"verdicts": v.n, "calls": c.n}


def _cells(fail: np.ndarray, names: tuple[str, str]) -> np.ndarray:
    """Cell number 0-3 of each item in the 2x2 of two criteria's true verdicts."""
    return fail[:, CRITERIA.index(names[0])].astype(int) * 2 + fail[:, CRITERIA.index(names[1])].astype(int)


def _quotas(counts: np.ndarray, total: int) -> np.ndarray:
    """Largest-remainder allocation of ``total`` draws proportional to ``counts``."""
    exact = counts / counts.sum() * total
    q = np.floor(exact).astype(int)
    q[np.argsort(-(exact - q), kind="stable")[:total - q.sum()]] += 1
    return np.minimum(q, counts)


def write_support_labels(store: Store, seed: int, items, fail) -> dict:
    """`support-human`: 60 items labelled by two simulated annotators (a second one relabels a
    few of the first one's items), the truth with about 1% slips. The 60 are a seeded sample
    stratified by the true (grounded, no_fabrication) cell and, within it, by the true
    (answers_question, cites_source) cell, so the small set keeps the suite's real association
    (and real independence)."""
    rng = _rng(seed, "support-human")
    outer = _cells(fail, ("grounded", "no_fabrication"))
    inner = _cells(fail, ("answers_question", "cites_source"))
    chosen = []
    for k, q in enumerate(_quotas(np.bincount(outer, minlength=4), N_HUMAN_ITEMS)):
        members = np.flatnonzero(outer == k)
        for kk, qq in enumerate(_quotas(np.bincount(inner[members], minlength=4), q)):
            chosen += rng.choice(members[inner[members] == kk], qq, replace=False).tolist()
    chosen = sorted(int(x) for x in chosen)
    first = {i: ("sim-annotator-1" if j % 2 == 0 else "sim-annotator-2") for j, i in
             enumerate(rng.permutation(chosen).tolist())}
    ann1 = [i for i in chosen if first[i] == "sim-annotator-1"]
    overlap = set(rng.choice(ann1, HUMAN_OVERLAP, replace=False).tolist())
    lab = _Cols("labels")
    for i in chosen:
        who = [first[i]] + (["sim-annotator-2"] if i in overlap else [])
        for a in who:
            for j, c in enumerate(CRITERIA):
                f = bool(fail[i, j]) ^ bool(rng.random() < HUMAN_SLIP)
                lab.add(item_id=items[i]["item_id"], gen_round=1, criterion=c, annotator=a,
                        value="fail" if f else "pass", passed=not f)
    m = S.LabelSetManifest(
        labelset_id="support-human", gen_id="support-g1", created_at=_at(11),
        annotators=["sim-annotator-1", "sim-annotator-2"], rubric=_rubric_binary(), simulated=True,
        description=f"SIMULATED people: {N_HUMAN_ITEMS} answers of support-g1 labelled pass/fail on the six "
                    f"criteria by two simulated annotators ({HUMAN_OVERLAP} items by both). Equal to the "
                    "simulator's truth except for about 1% slips. The items are a seeded sample stratified "
                    "by the true verdicts on grounded, no_fabrication, answers_question and cites_source.")
    store.write_labelset(m, lab.arrow(), overwrite=True)
    return {"labels": lab.n}


# --------------------------------------------------------------------------- accounts


def accounts_items(seed: int) -> tuple[list[dict], list[dict]]:
    rng = _rng(seed, "accounts-items")
    items, info = [], []
    holdout = np.zeros(N_ACCOUNTS_ITEMS, dtype=bool)
    holdout[rng.choice(N_ACCOUNTS_ITEMS, int(round(HOLDOUT_SHARE * N_ACCOUNTS_ITEMS)), replace=False)] = True
    for i in range(N_ACCOUNTS_ITEMS):
        t = int(rng.integers(len(ACCOUNT_TOPICS)))
        s = {k: _pick(rng, v) for k, v in ACCOUNT_SLOTS.items()}
        topic = ACCOUNT_TOPICS[t]
        steps = [_fill(x, s) for x in topic["steps"]]
        items.append({"item_id": f"acc-{i + 1:03d}", "input": _fill(topic["q"], s),
                      "reference": " ".join(steps[:3]), "must_have": steps[:2],
                      "wrong_if": ["Tells the customer to share their password"],
                      "class": "account", "difficulty": _pick(rng, ["easy", "medium", "hard"]),
                      "holdout": bool(holdout[i])})
        info.append({"topic": t, "slots": s, "steps": steps})
    return items, info


def write_accounts_suite(store: Store, items: list[dict]) -> S.SuiteManifest:
    m = S.SuiteManifest(
        suite_id=ACCOUNTS, created_at=_at(12), content_hash=S.suite_hash(items), n_items=len(items),
        description="SIMULATED account-management questions (passwords, sign-in, members, data export) "
                    "answered by two writer prompts for a blinded pairwise comparison. Made by evalcore's "
                    "seeded simulator.", curated=False, simulated=True, source=SOURCE)
    store.write_suite(m, items, overwrite=True)
    return m


def _account_answer(rng: np.random.Generator, style: dict, info: dict, headed: bool) -> str:
    """One answer in an arm's style: a heading with the arm's probability, steps as bullets or as
    running prose, a few extra sentences (and sections, for the long arm)."""
    topic = ACCOUNT_TOPICS[info["topic"]]
    s, steps = info["slots"], info["steps"]
    n_steps = int(_pick(rng, list(style["steps"])))
    n_extra = int(rng.integers(style["extras"][0], style["extras"][1] + 1))
    use = steps[:n_steps]
    extras = [_fill(x, s) for x in rng.permutation(ACCOUNT_EXTRAS)[:n_extra]]
    lines: list[str] = []
    if headed:
        lines += [f"## {topic['title']}", ""]
    lines.append(_pick(rng, ACCOUNT_INTROS))
    lines.append("")
    if rng.random() < style["bullets"]:
        lines += [f"- {x}" for x in use]
    else:
        lines.append(" ".join(use))
    if style["sections"] and extras:
        half = max(1, len(extras) // 2)
        for title, chunk in zip(rng.permutation(ACCOUNT_SECTIONS[2:]).tolist(), (extras[:half], extras[half:])):
            if chunk:  # sub-headings only under a headed answer; otherwise plain paragraphs
                lines += ["", f"### {title}"] if headed else []
                lines += ["", " ".join(chunk)]
    elif extras:
        lines += ["", " ".join(extras)]
    return "\n".join(lines)


def accounts_bail_propensity(seed: int) -> dict[str, np.ndarray]:
    """Per arm and item, the probability of bailing in a round: most items almost never, some
    items about a third of the time (these flip across rounds), a few nearly always."""
    rng = _rng(seed, "accounts-bail")
    shares = np.array([x[0] for x in BAIL_MIX])
    probs = np.array([x[1] for x in BAIL_MIX])
    kind = rng.choice(len(BAIL_MIX), N_ACCOUNTS_ITEMS, p=shares)
    out = {}
    for arm in ARMS:
        p = probs[kind].copy()
        # each arm also has its own few shaky items
        p[rng.random(N_ACCOUNTS_ITEMS) < 0.05] = 0.4
        out[arm] = p
    return out


def write_accounts_generations(store: Store, seed: int, suite: S.SuiteManifest, items,
                               info) -> dict[str, list[list[dict]]]:
    """Two arms that differ only in the writer prompt (and so its hash); outputs[arm][item][round]."""
    bail = accounts_bail_propensity(seed)
    result: dict[str, list[list[dict]]] = {}
    for h, (arm, gen_id) in enumerate(ARMS.items()):
        rng = _rng(seed, "accounts-gen", arm)
        style = ARM_STYLE[arm]
        out = _Cols("outputs")
        per_item: list[list[dict]] = []
        bails = rng.random((len(items), GEN_ROUNDS)) < bail[arm][:, None]
        answered = np.flatnonzero(~bails.ravel())
        headed = np.zeros(bails.size, dtype=bool)  # exactly the arm's share of answers get a heading
        headed[rng.choice(answered, int(round(style["heading"] * answered.size)), replace=False)] = True
        headed = headed.reshape(bails.shape)
        for i, item in enumerate(items):
            rows = []
            for r in range(1, GEN_ROUNDS + 1):
                abstained = bool(bails[i, r - 1])
                text = ACCOUNT_BAIL if abstained else _account_answer(rng, style, info[i], bool(headed[i, r - 1]))
                tin = int(260 + 1.3 * _words(item["input"]) + rng.integers(0, 30))
                tout = int(1.35 * _words(text) + rng.integers(2, 10))
                row = dict(item_id=item["item_id"], round=r, output=text, abstained=abstained,
                           tokens_in=tin, tokens_out=tout, cost_usd=round((tin * 0.15 + tout * 0.6) / 1e6, 8),
                           latency_ms=round(float(300 + 17 * tout + rng.lognormal(5.0, 0.4)), 1))
                out.add(**row)
                rows.append(row)
            per_item.append(rows)
        lat = np.array(out.cols["latency_ms"])
        writer_prompt = f"accounts writer prompt: {arm} v2"
        m = S.GenerationManifest(
            gen_id=gen_id, suite_id=ACCOUNTS, suite_hash=suite.content_hash, created_at=_at(13 + h),
            knobs={"generator_model": "simulated/writer-gamma-2025-05-20", "temperature": 0.7,
                   "writer_prompt": arm, "writer_prompt_hash": S.text_hash(writer_prompt), "revision_budget": 0,
                   "token_budget": 600, "corpus_snapshot": "account-help-2025-12", "retrieval": "none",
                   "description": "SIMULATED answers; the arms differ in the writer prompt alone"},
            rounds=GEN_ROUNDS, status="complete", source=SOURCE,
            outputs_hash=S.outputs_hash(o for rows in per_item for o in rows),
            totals=S.Totals(calls=out.n, tokens_in=int(sum(out.cols["tokens_in"])),
                            tokens_out=int(sum(out.cols["tokens_out"])),
                            cost_usd=round(float(sum(out.cols["cost_usd"])), 6),
                            latency_ms_mean=round(float(lat.mean()), 1),
                            latency_ms_p95=round(float(np.percentile(lat, 95)), 1)),
            simulated=True)
        store.write_generation(m, out.arrow(), overwrite=True)
        result[arm] = per_item
    return result


def write_accounts_runs(store: Store, seed: int, items, gens: dict[str, list[list[dict]]]) -> dict:
    """A split judge run over each arm (answers_question, accurate, concise; one judge round).
    Bails fail answers_question; the long arm fails `concise` far more often."""
    text = {"answers_question": "Does the answer address the question?",
            "accurate": "Are the steps right for this product?",
            "concise": "Is it no longer than it needs to be?"}
    rubric = S.Rubric(name="accounts-3", criteria=[S.Criterion(name=c, kind="binary", description=text[c])
                                                   for c in ACCOUNT_CRITERIA])
    tpl = _template("split", "default")
    tpl_hash = S.text_hash(tpl)
    counts = {"verdicts": 0, "calls": 0}
    p_long_fail = {"concise": 0.08, "detailed": 0.45}
    for h, (arm, gen_id) in enumerate(ARMS.items()):
        rng = _rng(seed, "accounts-run", arm)
        run_id = f"{gen_id}-split"
        v, c = _Cols("verdicts"), _Cols("calls")
        call_no = 0
        for i, item in enumerate(items):
            for o in gens[arm][i]:
                truth = {"answers_question": o["abstained"] or rng.random() < 0.05,
                         "accurate": rng.random() < 0.10,
                         "concise": (not o["abstained"]) and rng.random() < p_long_fail[arm]}
                for crit, f in truth.items():
                    f = f ^ (rng.random() < 0.04)
                    call_no += 1
                    row = _call_row(rng, JUDGE_A, run_id, call_no, item, o["output"], o["round"], 1, [crit],
                                    tpl_hash, 15 + h)
                    c.add(**row)
                    v.add(run_id=run_id, item_id=item["item_id"], gen_round=o["round"], criterion=crit,
                          judge_round=1, passed=not f, raw_verdict="fail" if f else "pass",
                          reason=("Bails out without answering." if o["abstained"] and crit == "answers_question"
                                  else f"{'Fails' if f else 'Meets'} {crit.replace('_', ' ')}."),
                          position=0, call_id=row["call_id"])
        m = S.RunManifest(
            run_id=run_id, gen_id=gen_id, created_at=_at(15 + h), rubric=rubric, rubric_hash=rubric.hash(),
            mode="split", field_order=rubric.names(), judge_model=JUDGE_A["model"], judge_family=JUDGE_A["family"],
            temperature=0.0, prompt_template=tpl, prompt_hash=tpl_hash, postprocess_version="pp-1.0",
            retry_policy={"max_retries": 2, "backoff": "exponential", "timeout_s": 60},
            structured_output="json_schema", judge_rounds=1, source=SOURCE, status="complete", totals=_totals(c),
            price_map_version=PRICE_MAP_VERSION, simulated=True,
            description="SIMULATED: made by evalcore's seeded simulator. One call per criterion over every "
                        "generation round of this arm.")
        store.write_run(m, v.arrow(), c.arrow(), overwrite=True)
        counts["verdicts"] += v.n
        counts["calls"] += c.n
    return counts


def accounts_preference(seed: int, bail_long: Iterable[bool], bail_short: Iterable[bool]) -> np.ndarray:
    """Per item, the probability that a careful reader prefers the long arm's answer (round 1):
    about 0.58 on average, varying by item; a bail loses nearly always. Its own stream, so that
    tests/test_pairs.py can recompute what the demo planted."""
    bl, bc = np.asarray(list(bail_long), bool), np.asarray(list(bail_short), bool)
    rng = _rng(seed, "accounts-preference")
    p = np.clip(0.58 + rng.normal(0, 0.2, bl.size), 0.05, 0.95)
    p[bl & ~bc] = 0.05
    p[bc & ~bl] = 0.95
    return p


def _choose(rng: np.random.Generator, p_left: float, bias: float) -> str:
    if rng.random() < P_SAME:
        return "same"
    return "left" if rng.random() < min(0.98, max(0.02, p_left + bias)) else "right"


def _arms_of(gens, items, gen_round: int, idx: Iterable[int] | None = None):
    """The two arms as :class:`evalcore.pairs.Arm`: raw answers of one generation round."""
    from .pairs import Arm
    idx = list(range(len(items))) if idx is None else list(idx)
    return [Arm(name, ARMS[name], {items[i]["item_id"]: gens[name][i][gen_round - 1]["output"] for i in idx}, ACCOUNTS)
            for name in ARMS]


def write_accounts_sessions(store: Store, seed: int, items, gens, keys: Path) -> dict:
    """`accounts-ab` (closed, with simulated reviewers' choices and a model grader run) and
    `accounts-practice` (open, no choices), both made by :func:`evalcore.pairs.plan_session` (the
    code path of `evalcore pairs make`). Keys go to the keys directory only."""
    from .blinding import NORMALISATIONS
    from .pairs import plan_session, write_plan
    key_seed = int(_rng(seed, "accounts-ab-key").integers(2 ** 62))
    plan = plan_session("accounts-ab", _arms_of(gens, items, 1), normalise=NORMALISATIONS, mirror=MIRROR_SHARE,
                        holdout=N_HOLDOUT_PAIRS, seed=int(seed), key_seed=key_seed, created_at=_at(17),
                        source=SOURCE, simulated=True)
    pairs, key = plan.pairs, plan.key_rows
    pref_long = accounts_preference(seed, [gens["detailed"][i][0]["abstained"] for i in range(len(items))],
                                    [gens["concise"][i][0]["abstained"] for i in range(len(items))])
    idx_of = {it["item_id"]: i for i, it in enumerate(items)}
    key_of = {k["pair_id"]: k for k in key}
    rng = _rng(seed, "accounts-ab-people")
    jud = _Cols("judgments")
    for p in pairs:
        k = key_of[p["pair_id"]]
        p_left = pref_long[idx_of[p["item_id"]]] if k["left_arm"] == "detailed" else 1 - pref_long[idx_of[p["item_id"]]]
        seen = [r for r, share in REVIEWERS.items() if rng.random() < share] or ["sim-reviewer-1"]
        for r in seen:
            words = _words(p["left_text"]) + _words(p["right_text"])
            jud.add(pair_id=p["pair_id"], reviewer=r, choice=_choose(rng, p_left, LEFT_BIAS_PEOPLE),
                    seconds=round(float(8 + 0.06 * words + rng.lognormal(2.6, 0.5)), 1))
    plan.manifest = plan.manifest.model_copy(update={"status": "closed"})
    write_plan(store, plan, keys, judgments=jud.arrow(), overwrite=True)
    grader = write_pair_grader(store, seed, pairs, key_of, pref_long, idx_of)

    rng_p = _rng(seed, "accounts-practice")
    pick = sorted(rng_p.choice(len(items), N_PRACTICE_PAIRS - 1, replace=False).tolist())
    pkey_seed = int(_rng(seed, "accounts-practice-key").integers(2 ** 62))
    pplan = plan_session("accounts-practice", _arms_of(gens, items, 2, pick), normalise=NORMALISATIONS,
                         mirror=round(1 / (N_PRACTICE_PAIRS - 1), 4), holdout=0, seed=int(seed),
                         key_seed=pkey_seed, gen_round=2, created_at=_at(19), source=SOURCE, simulated=True)
    write_plan(store, pplan, keys, overwrite=True)
    return {"pairs": len(pairs) + len(pplan.pairs), "judgments": jud.n, **grader}


def write_pair_grader(store: Store, seed: int, pairs, key_of, pref_long, idx_of) -> dict:
    """`accounts-ab-grader`: a model grader saw every pair twice, as shown and swapped. It forms
    one verdict per pair (the long answer with the careful reader's probability) and reports it,
    except that it says "same" with probability GRADER_SAME, and when its verdict is the answer
    it read second it switches to the first with probability FIRST_BIAS_GRADER. So, per pair, the
    two orders reverse each other with probability (1 - s)^2 b, disagree at all with probability
    1 - s^2 - (1 - s)^2 (1 - b), and a decided verdict names the first-read answer with
    probability (1 + b) / 2 (s = GRADER_SAME, b = FIRST_BIAS_GRADER; tests/test_pairs.py checks
    the report against these). Choices are stored in as-shown terms."""
    rng = _rng(seed, "accounts-ab-grader")
    run_id = "accounts-ab-grader"
    pv, c = _Cols("pair_verdicts"), _Cols("calls")
    tpl = ("Two answers to one customer question. Which serves the customer better: first, second or "
           "same? Reason first.\n\nQuestion:\n{input}\n\nFirst:\n{a}\n\nSecond:\n{b}")
    tpl_hash = S.text_hash(tpl)
    call_no = 0
    for p in pairs:
        k = key_of[p["pair_id"]]
        pl = pref_long[idx_of[p["item_id"]]]
        p_left = pl if k["left_arm"] == "detailed" else 1 - pl
        verdict = "left" if rng.random() < p_left else "right"  # the grader's own view of the pair
        for order in ("as_shown", "swapped"):
            call_no += 1
            first = "left" if order == "as_shown" else "right"
            if rng.random() < GRADER_SAME:
                choice = "same"
            elif verdict != first and rng.random() < FIRST_BIAS_GRADER:
                choice = first  # swayed towards the answer it read first
            else:
                choice = verdict
            cid = f"{run_id}-c{call_no:06d}"
            words = _words(p["left_text"]) + _words(p["right_text"])
            tin, tout = int(150 + 1.3 * words), int(40 + rng.integers(0, 30))
            c.add(call_id=cid, item_id=p["item_id"], gen_round=1, judge_round=1, criteria=["preference"],
                  model=JUDGE_B["reported"], prompt_hash=S.text_hash(f"{tpl_hash}|{p['pair_id']}|{order}"),
                  tokens_in=tin, tokens_out=tout,
                  cost_usd=round((tin * JUDGE_B["price_in"] + tout * JUDGE_B["price_out"]) / 1e6, 8),
                  latency_ms=round(float(300 + 9 * tout + rng.lognormal(5.0, 0.4)), 1), attempts=1,
                  cache_hit=False, started_at=_at(18) + timedelta(milliseconds=call_no * 211))
            reason = {"same": "Both answers give the same steps.",
                      "left": "The answer on the left is easier to act on.",
                      "right": "The answer on the right is easier to act on."}[choice]
            pv.add(pair_id=p["pair_id"], order=order, choice=choice, reason=reason, call_id=cid)
    rubric = S.Rubric(name="pairwise", criteria=[S.Criterion(
        name="preference", kind="binary",
        description="Which answer serves the customer better (left, right or same)?")])
    m = S.RunManifest(
        run_id=run_id, gen_id=ARMS["concise"], created_at=_at(18), rubric=rubric, rubric_hash=rubric.hash(),
        mode="imported", field_order=["preference"], judge_model=JUDGE_B["model"], judge_family=JUDGE_B["family"],
        temperature=0.0, prompt_template=tpl, prompt_hash=tpl_hash, judge_rounds=1, source=SOURCE,
        status="complete", totals=_totals(c), knobs={"session_id": "accounts-ab"},
        price_map_version=PRICE_MAP_VERSION, simulated=True,
        description="SIMULATED model grader of the pairwise session accounts-ab: every pair graded twice, "
                    "as shown and swapped; choices are in as-shown terms (pair_verdicts.parquet). A pair run "
                    "has no generation of its own: gen_id names one of the two compared generations only "
                    "because the contract needs one; verdicts.parquet is empty.")
    store.write_run(m, _Cols("verdicts").arrow(), c.arrow(), pv.arrow(), overwrite=True)
    return {"pair_verdicts": pv.n, "grader_calls": c.n}


# --------------------------------------------------------------------------- the whole world

OWNED = {
    "suites": [SUPPORT, ACCOUNTS],
    "generations": ["support-g1", *ARMS.values()],
    "runs": ["support-single", "support-single-indep", "support-grouped", "support-split",
             "support-split-judgeB", "support-ternary", "support-polluted", "support-partial", "support-ordinal",
             *(f"{g}-split" for g in ARMS.values()), "accounts-ab-grader"],
    "sessions": ["accounts-ab", "accounts-practice"],
    "labels": ["support-human"],
}


def _clean(out: Path, keys: Path) -> None:
    """Remove what the demo owns (and leftovers of interrupted writes), so regeneration is clean."""
    for sub, ids in OWNED.items():
        root = out / sub
        for i in ids:
            shutil.rmtree(root / i, ignore_errors=True)
        if root.is_dir():
            for p in root.iterdir():
                if p.name.startswith((".tmp-", ".old-")):
                    shutil.rmtree(p, ignore_errors=True)
    for sid in OWNED["sessions"]:
        shutil.rmtree(keys / sid, ignore_errors=True)


def generate_demo(out: Path, seed: int = DEFAULT_SEED, keys: Path | None = None) -> dict:
    """Write the SIMULATED demo world into ``out`` (keys into ``keys``, by default the sibling
    ``<out>-keys``) and return a summary of counts. Deterministic in ``seed``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    keys = Path(keys) if keys is not None else default_keys_dir(out)
    _clean(out, keys)
    with tempfile.TemporaryDirectory(prefix="evalcore-demo-state-") as state:
        store = Store(out, state_dir=state)
        fail = support_truth(seed)
        items, info = support_items(seed, fail)
        suite = write_support_suite(store, items)
        _, outputs = write_support_generation(store, seed, suite, items, info, fail)
        counts = {"verdicts": 0, "calls": 0}
        parts = [write_support_judged_runs(store, seed, items, info, outputs, fail),
                 write_support_ternary(store, seed, items, info, outputs, fail),
                 write_support_ordinal(store, seed, items, info, outputs, fail)]
        labels = write_support_labels(store, seed, items, fail)
        acc_items, acc_info = accounts_items(seed)
        acc_suite = write_accounts_suite(store, acc_items)
        gens = write_accounts_generations(store, seed, acc_suite, acc_items, acc_info)
        parts.append(write_accounts_runs(store, seed, acc_items, gens))
        sess = write_accounts_sessions(store, seed, acc_items, gens, keys)
        for d in parts:
            counts["verdicts"] += d["verdicts"]
            counts["calls"] += d["calls"]
        return {
            "seed": int(seed),
            "suites": len(OWNED["suites"]), "generations": len(OWNED["generations"]),
            "runs": len(OWNED["runs"]), "sessions": len(OWNED["sessions"]), "labelsets": len(OWNED["labels"]),
            "items": len(items) + len(acc_items),
            "outputs": len(outputs) + sum(len(r) for g in gens.values() for r in g),
            "verdicts": counts["verdicts"], "calls": counts["calls"] + sess["grader_calls"],
            "labels": labels["labels"], "pairs": sess["pairs"], "judgments": sess["judgments"],
            "pair_verdicts": sess["pair_verdicts"],
        }
