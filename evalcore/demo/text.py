"""The text banks of the SIMULATED demo world: no code, only the words its answers, reasons and
prompts are drawn from.

* Support suite: :data:`TOPICS` (one help article each: question variants, passage, reference,
  must-have and wrong-if entries, an invented detail and a stray claim) filled from :data:`SLOTS`;
  the unanswerable questions, greetings and closings, the honest "couldn't find" :data:`NOTE`,
  the judges' :data:`REASONS` and :data:`CARRYOVER_REASONS`, and the judge prompt
  (:data:`CRITERION_TEXT`, :data:`JUDGE_TEMPLATE`, :data:`INDEPENDENT_LINE`).
* Accounts suite: :data:`ACCOUNT_TOPICS`, :data:`ACCOUNT_SLOTS`, :data:`ACCOUNT_EXTRAS` and the
  pieces of the long and short arms' answers, with :data:`ACCOUNT_CRITERIA`.
"""

from __future__ import annotations

from typing import Any

# --------------------------------------------------------------------------- text banks

# Slot values the templates draw from.
SLOTS: dict[str, list[Any]] = {
    "days": [3, 5, 7],
    "days2": [5, 7, 10],
    "window": [14, 30, 60],
    "hours": [24, 48, 72],
    "amount": ["$12.99", "$24.00", "$39.50", "$58.20", "$89.99", "$120.00"],
    "plan": ["Basic", "Plus", "Pro", "Team"],
    "plan2": ["Plus", "Pro", "Team", "Enterprise"],
    "carrier": ["UPS", "FedEx", "DHL", "USPS"],
    "region": ["Canada", "the EU", "Australia", "Mexico"],
    "product": [
        "desk lamp",
        "blender",
        "backpack",
        "headphones",
        "coffee grinder",
        "yoga mat",
        "phone case",
        "water bottle",
        "keyboard",
        "rain jacket",
    ],
    "fee": ["$4.99", "$7.50", "$9.95"],
    "limit": [3, 5, 10],
    "count": [2, 3, 4],
}

# One topic per help article. q: question variants; passage/reference/must_have/wrong_if are
# filled from SLOTS; fab: an invented detail; stray: a claim the passage does not support.
TOPICS: list[dict[str, Any]] = [
    dict(
        cls="billing",
        subject="a duplicate charge",
        q=[
            "I was charged twice for order {order}. How do I get the extra charge back?",
            "Why are there two charges of {amount} on my card for one order?",
            "My statement shows {amount} taken twice. Is that a mistake?",
        ],
        passage="A second charge for the same order is usually an authorisation hold. Holds fall off "
        "within {days} business days. If a duplicate has settled, support refunds it to the "
        "original card within {days2} business days.",
        reference="The second charge is most likely a temporary hold that falls off within {days} business "
        "days; if it has settled, we refund it to your card within {days2} business days.",
        must_have=[
            "Second charge is likely a temporary hold",
            "Hold falls off within {days} business days",
            "Settled duplicates are refunded to the original card",
        ],
        wrong_if=["Tells the customer to dispute the charge with their bank first"],
        fab="We'll also add a {fee} credit to your account for the trouble.",
        stray="This usually happens when your bank is running slow.",
    ),
    dict(
        cls="billing",
        subject="updating a payment card",
        q=[
            "How do I change the card I pay with?",
            "My card expired, where do I put the new one?",
            "Can I switch my payment method before the next bill on the {plan} plan?",
        ],
        passage="Payment cards are managed under Settings > Billing > Payment methods. A new card can be "
        "added and set as default at any time; the next invoice is charged to the default card.",
        reference="Go to Settings > Billing > Payment methods, add the new card and set it as default; "
        "your next invoice goes to that card.",
        must_have=["Settings > Billing > Payment methods", "Set the new card as default"],
        wrong_if=["Says the card can only be changed by contacting support"],
        fab="Changing cards also resets your billing date to today.",
        stray="Most banks prefer you update it a week before the bill.",
    ),
    dict(
        cls="billing",
        subject="an invoice copy",
        q=[
            "Where can I download an invoice for my {plan} subscription?",
            "I need a VAT invoice for last month, how do I get one?",
            "Can you send me a copy of my receipt for {amount}?",
        ],
        passage="Invoices for the last {limit} years are under Settings > Billing > Invoices as PDF. "
        "A VAT number added to the billing profile appears on every invoice issued afterwards.",
        reference="Download it as a PDF from Settings > Billing > Invoices; add your VAT number to the "
        "billing profile so it appears on new invoices.",
        must_have=["Invoices are under Settings > Billing > Invoices", "VAT number goes in the billing profile"],
        wrong_if=["Says past invoices are updated with a newly added VAT number"],
        fab="Invoices older than a year are emailed on request within {hours} hours.",
        stray="Accountants usually need the PDF rather than a screenshot.",
    ),
    dict(
        cls="billing",
        subject="a price change",
        q=[
            "Why did my {plan} bill go up this month?",
            "My renewal was {amount}, higher than before. Why?",
            "Did the price of the {plan} plan change?",
        ],
        passage="Plan prices changed on the first of the month. Existing subscribers were emailed {window} "
        "days ahead and keep the old price until their next renewal.",
        reference="Plan prices changed this month; you were emailed {window} days before and the new price "
        "applies from your next renewal.",
        must_have=["Plan prices changed", "Notice was emailed {window} days ahead"],
        wrong_if=["Says the charge is an error and will be refunded"],
        fab="Customers who complain get the old price for another year.",
        stray="Prices tend to change at the start of each quarter.",
    ),
    dict(
        cls="shipping",
        subject="delivery time",
        q=[
            "When will order {order} arrive?",
            "How long does standard shipping take to {region}?",
            "It's been a week and my {product} hasn't shown up. Normal?",
        ],
        passage="Standard shipping takes {days}-{days2} business days after dispatch; international orders "
        "to {region} add up to {days} more days for customs. Tracking appears once the {carrier} "
        "label is scanned.",
        reference="Standard shipping is {days}-{days2} business days after dispatch, plus up to {days} days "
        "for customs to {region}; tracking shows once {carrier} scans the label.",
        must_have=["{days}-{days2} business days after dispatch", "Customs can add up to {days} days"],
        wrong_if=["Promises delivery by a specific date"],
        fab="If it's late we refund the shipping fee automatically.",
        stray="Deliveries are usually faster early in the week.",
    ),
    dict(
        cls="shipping",
        subject="a tracking number",
        q=[
            "Where do I find the tracking number for order {order}?",
            "My tracking link says label created, what does that mean?",
            "How do I track my {product}?",
        ],
        passage="The tracking number is in the dispatch email and under Orders > {order}. 'Label created' "
        "means {carrier} has not scanned the parcel yet; updates usually start within {hours} hours.",
        reference="Find it in the dispatch email or under Orders; 'label created' means {carrier} has not "
        "scanned it yet, and updates usually start within {hours} hours.",
        must_have=["Tracking number is in the dispatch email or under Orders", "'Label created' means not scanned yet"],
        wrong_if=["Says the parcel is lost"],
        fab="You can also get live GPS location of the van in the app.",
        stray="Carriers often skip the first scan on busy days.",
    ),
    dict(
        cls="shipping",
        subject="changing the delivery address",
        q=[
            "Can I change the shipping address on order {order}?",
            "I moved, can my {product} go to my new address?",
            "I typed the wrong street, can you fix it?",
        ],
        passage="The address can be edited under Orders until the order is dispatched. After dispatch, "
        "{carrier} can redirect the parcel for a {fee} fee through its own site.",
        reference="Edit it under Orders before dispatch; after dispatch, {carrier} can redirect it for "
        "{fee} on its site.",
        must_have=["Edit the address under Orders before dispatch", "After dispatch the carrier can redirect it"],
        wrong_if=["Says the address can never be changed"],
        fab="We'll reship to the new address for free if the first one fails.",
        stray="Redirects usually add a day or two.",
    ),
    dict(
        cls="shipping",
        subject="a damaged parcel",
        q=[
            "My {product} arrived broken. What now?",
            "The box for order {order} was crushed and the item is damaged.",
            "Item came damaged, do I need to send it back?",
        ],
        passage="Damaged items are reported under Orders > Report a problem within {window} days, with a "
        "photo. A replacement or refund is offered; the damaged item does not need to be returned.",
        reference="Report it under Orders > Report a problem within {window} days with a photo; you'll be "
        "offered a replacement or refund and don't need to send it back.",
        must_have=["Report within {window} days with a photo", "No need to return the damaged item"],
        wrong_if=["Asks the customer to ship the damaged item back first"],
        fab="You'll also receive a {amount} voucher.",
        stray="Most damage happens at the last sorting depot.",
    ),
    dict(
        cls="account",
        subject="resetting a password",
        q=[
            "I can't log in, how do I reset my password?",
            "The reset email never arrived. What should I do?",
            "How do I change my password?",
        ],
        passage="Use 'Forgot password' on the sign-in page; the reset link is valid for {hours} hours. If no "
        "email arrives within a few minutes, check spam or request it again; only {limit} requests "
        "per hour are allowed.",
        reference="Click 'Forgot password' on the sign-in page; the link lasts {hours} hours. Check spam if it "
        "doesn't arrive, and note the limit of {limit} requests per hour.",
        must_have=["Use 'Forgot password' on the sign-in page", "Reset link is valid for {hours} hours"],
        wrong_if=["Asks the customer to send their current password"],
        fab="Support can also read your old password back to you.",
        stray="Reset emails are slower for free email providers.",
    ),
    dict(
        cls="account",
        subject="two-factor authentication",
        q=[
            "How do I turn on two-factor authentication?",
            "I lost my phone with my 2FA app. How do I get in?",
            "Can I use SMS codes instead of an app for 2FA?",
        ],
        passage="Two-factor authentication is set up under Settings > Security with an authenticator app. "
        "Backup codes shown at setup let you sign in without the phone. SMS codes are not offered.",
        reference="Turn it on under Settings > Security with an authenticator app; use your backup codes if "
        "you lose the phone. SMS codes aren't available.",
        must_have=["Settings > Security with an authenticator app", "Backup codes work without the phone"],
        wrong_if=["Says SMS codes are available"],
        fab="Support can disable 2FA over chat if you give your order number.",
        stray="Most customers prefer the app over SMS anyway.",
    ),
    dict(
        cls="account",
        subject="changing the account email",
        q=[
            "How do I change the email on my account?",
            "I no longer use my old email, can I update it?",
            "Can I move my account to a work email?",
        ],
        passage="The sign-in email is changed under Settings > Profile. A confirmation link goes to the new "
        "address and the change applies once it is clicked; the old address gets a notice.",
        reference="Change it under Settings > Profile and click the confirmation link sent to the new "
        "address; the old address is notified.",
        must_have=["Change it under Settings > Profile", "Confirm via the link sent to the new address"],
        wrong_if=["Says a new account must be created"],
        fab="The change also moves your order history to the new email's other accounts.",
        stray="Work emails sometimes block our messages.",
    ),
    dict(
        cls="account",
        subject="closing an account",
        q=[
            "How do I delete my account?",
            "I want to close my account and remove my data.",
            "Can I cancel everything and delete my profile?",
        ],
        passage="Accounts are closed under Settings > Privacy > Close account. Active subscriptions must be "
        "cancelled first. Personal data is deleted within {window} days, except invoices kept for tax law.",
        reference="Cancel any subscription, then use Settings > Privacy > Close account; data is deleted within "
        "{window} days except invoices kept for tax reasons.",
        must_have=["Cancel active subscriptions first", "Data deleted within {window} days except invoices"],
        wrong_if=["Says all data including invoices is deleted immediately"],
        fab="Closed accounts can be restored any time within a year.",
        stray="Most people who close an account come back later.",
    ),
    dict(
        cls="returns",
        subject="a return window",
        q=[
            "Can I still return my {product}? I bought it {count} weeks ago.",
            "What is your return policy?",
            "How many days do I have to send back order {order}?",
        ],
        passage="Items can be returned within {window} days of delivery if unused and in the original "
        "packaging. Start the return under Orders > Return an item to get a prepaid {carrier} label.",
        reference="You have {window} days from delivery for unused items in original packaging; start it under "
        "Orders > Return an item for a prepaid {carrier} label.",
        must_have=[
            "{window} days from delivery",
            "Unused and in original packaging",
            "Start under Orders > Return an item",
        ],
        wrong_if=["Quotes a different return window"],
        fab="Opened items can be returned too if you pay a small restocking fee.",
        stray="Returns are processed faster on weekdays.",
    ),
    dict(
        cls="returns",
        subject="refund timing",
        q=[
            "When will I get my refund for order {order}?",
            "I sent the {product} back {count} weeks ago, where is my money?",
            "How long do refunds take?",
        ],
        passage="Refunds are issued within {days} business days after the return is received at the "
        "warehouse, to the original payment method. Banks may take up to {days2} more days to show it.",
        reference="We refund within {days} business days of receiving the return, to the original payment "
        "method; your bank may take up to {days2} more days.",
        must_have=["Within {days} business days of receiving the return", "To the original payment method"],
        wrong_if=["Says the refund is issued as store credit only"],
        fab="Refunds over {amount} are split into two payments.",
        stray="Refunds are usually quicker for card payments than for PayPal.",
    ),
    dict(
        cls="returns",
        subject="an exchange",
        q=[
            "Can I exchange my {product} for a different colour?",
            "The size is wrong, can I swap it?",
            "How do exchanges work?",
        ],
        passage="Direct exchanges are not offered. Return the item under Orders > Return an item and place a "
        "new order; the refund follows the usual timeline.",
        reference="We don't do direct exchanges: return the item under Orders > Return an item and place a new order.",
        must_have=["Direct exchanges are not offered", "Return the item and place a new order"],
        wrong_if=["Offers a direct swap"],
        fab="We'll hold the new size for you for {days} days.",
        stray="Popular colours tend to sell out quickly.",
    ),
    dict(
        cls="subscriptions",
        subject="cancelling a subscription",
        q=[
            "How do I cancel my {plan} subscription?",
            "I want to stop being charged for {plan}.",
            "If I cancel now, do I lose access right away?",
        ],
        passage="Subscriptions are cancelled under Settings > Billing > Subscription. Access continues until "
        "the end of the paid period; no partial refunds are given for unused days.",
        reference="Cancel under Settings > Billing > Subscription; you keep access until the end of the paid "
        "period, and unused days are not refunded.",
        must_have=[
            "Cancel under Settings > Billing > Subscription",
            "Access lasts until the period ends",
            "No partial refunds",
        ],
        wrong_if=["Promises a prorated refund"],
        fab="Cancelling within {hours} hours of renewal refunds the whole period.",
        stray="Many customers pause instead of cancelling.",
    ),
    dict(
        cls="subscriptions",
        subject="changing plans",
        q=[
            "How do I upgrade from {plan} to {plan2}?",
            "Can I downgrade my plan mid-cycle?",
            "What happens to my bill if I switch to {plan2}?",
        ],
        passage="Plans are changed under Settings > Billing > Subscription. Upgrades apply at once with a "
        "prorated charge; downgrades take effect at the next renewal.",
        reference="Switch under Settings > Billing > Subscription: upgrades apply now with a prorated charge, "
        "downgrades at the next renewal.",
        must_have=["Upgrades apply immediately, prorated", "Downgrades apply at next renewal"],
        wrong_if=["Says downgrades are refunded immediately"],
        fab="Upgrading also doubles your storage for free for {count} months.",
        stray="Most teams upgrade when they add a {count}rd member.",
    ),
    dict(
        cls="subscriptions",
        subject="a free trial",
        q=["Will I be charged when my trial ends?", "How long is the {plan2} trial?", "Can I get a second free trial?"],
        passage="The trial lasts {window} days. A reminder is emailed {days} days before it ends, and the "
        "card on file is charged on the last day unless the trial is cancelled. One trial per account.",
        reference="The trial is {window} days; you get a reminder {days} days before the end and are charged "
        "on the last day unless you cancel. One trial per account.",
        must_have=["Trial lasts {window} days", "Charged at the end unless cancelled"],
        wrong_if=["Says no card is charged automatically"],
        fab="You can extend the trial once by emailing support.",
        stray="Trials convert better when people use them early.",
    ),
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
    "answers_question": (
        ["The reply addresses {s}, which is what was asked.", "Directly answers the question about {s}."],
        [
            "The reply talks around {s} without answering the question.",
            "Answers a different question than the one about {s}.",
        ],
    ),
    "grounded": (
        ["Every claim matches the passage.", "Statements about {s} follow the article."],
        ["Includes claims about {s} that the passage does not support.", "Goes beyond what the article says."],
    ),
    "cites_source": (
        ["Names the article it relies on.", "Cites the passage by its id."],
        ["No source is named.", "Does not point to the article it used."],
    ),
    "no_fabrication": (
        ["No invented details.", "Nothing about {s} is made up."],
        ["Invents a detail about {s} that appears nowhere.", "States a policy that does not exist."],
    ),
    "refuses_when_unanswerable": (
        ["Declines or answers appropriately for what the articles cover.", "Handles coverage correctly."],
        ["Answers although the articles do not cover it, or declines needlessly.", "Wrong call on whether to decline."],
    ),
    "on_tone": (
        ["Polite and helpful.", "Friendly, professional tone."],
        ["Curt or condescending.", "Tone is dismissive."],
    ),
}
CARRYOVER_REASONS = [
    "Given the problems above, this also falls short.",
    "Same issue as the previous point.",
    "Fails for the reasons already noted.",
]

CRITERION_TEXT = {
    "answers_question": "Does the answer address the customer's actual question?",
    "grounded": "Is every claim supported by the provided passages?",
    "cites_source": "Does the answer name or quote the passage it relied on (e.g. [doc-12])?",
    "no_fabrication": "Is the answer free of invented facts, policies or numbers?",
    "refuses_when_unanswerable": "Does it decline when the passages cannot answer, and only then?",
    "on_tone": "Is the tone polite, calm and professional?",
}

JUDGE_SYSTEM = (
    "You grade one customer-support answer. Read the question, the help-article passages and the "
    "answer. For every criterion write a one-sentence reason, then a verdict."
)
JUDGE_TEMPLATE = (
    JUDGE_SYSTEM + "\n\nQuestion:\n{input}\n\nPassages:\n{context}\n\nAnswer:\n{output}\n\n"
    "Criteria:\n{criteria_block}\n{variant_line}\nReturn JSON: for each criterion in the order "
    'listed, {{"reason": ..., "verdict": "pass" | "fail"}}.'
)
INDEPENDENT_LINE = "Evaluate each criterion independently of the others.\n"

# accounts suite
ACCOUNT_TOPICS: list[dict[str, Any]] = [
    dict(
        title="Resetting your password",
        q="How do I reset my password on {device}?",
        steps=[
            "Open the sign-in page and choose 'Forgot password'.",
            "Enter the email you signed up with.",
            "Open the reset email and follow the link within {hours} hours.",
            "Pick a new password of at least {n} characters.",
            "Sign in again on {device}.",
            "Sign out of other devices from Settings > Security if you like.",
        ],
    ),
    dict(
        title="Turning on two-step sign-in",
        q="How do I turn on two-step sign-in for my {plan} account?",
        steps=[
            "Go to Settings > Security.",
            "Choose 'Two-step sign-in' and scan the code with an authenticator app.",
            "Type the six-digit code to confirm.",
            "Save the backup codes somewhere safe.",
            "Sign in once more to check it works.",
            "Repeat on any other admin accounts.",
        ],
    ),
    dict(
        title="Changing your sign-in email",
        q="How can I change the email address on my account?",
        steps=[
            "Open Settings > Profile.",
            "Enter the new email address and save.",
            "Click the confirmation link sent to the new address.",
            "Sign in with the new address from now on.",
            "Check the old inbox for the change notice.",
            "Update saved logins on {device}.",
        ],
    ),
    dict(
        title="Adding a team member",
        q="How do I add a colleague to our {plan} workspace?",
        steps=[
            "Open Settings > Members.",
            "Choose 'Invite' and enter their work email.",
            "Pick a role: member or admin.",
            "They accept the invite within {days} days.",
            "Seats are billed from the day they join.",
            "Remove people from the same page.",
        ],
    ),
    dict(
        title="Exporting your data",
        q="Can I download all of my account data?",
        steps=[
            "Open Settings > Privacy.",
            "Choose 'Export my data'.",
            "Pick the format you want.",
            "Wait for the email, usually within {hours} hours.",
            "Download the archive within {days} days.",
            "Keep the file somewhere private.",
        ],
    ),
    dict(
        title="Transferring billing ownership",
        q="How do I make someone else the billing owner of our account?",
        steps=[
            "The current owner opens Settings > Billing.",
            "Choose 'Transfer ownership'.",
            "Select an existing admin.",
            "The new owner confirms by email.",
            "Invoices from the next period go to the new owner.",
            "Update the card on file if needed.",
        ],
    ),
    dict(
        title="Unlocking a locked account",
        q="My account got locked after too many attempts on {device}. What now?",
        steps=[
            "Wait {n} minutes for the lock to clear.",
            "Use 'Forgot password' if you are unsure of it.",
            "Sign in from a device you used before.",
            "Check Settings > Security for unknown sign-ins.",
            "Turn on two-step sign-in afterwards.",
            "Contact support if the lock stays.",
        ],
    ),
    dict(
        title="Merging two accounts",
        q="I have two accounts with different emails. Can they be merged?",
        steps=[
            "Decide which account to keep.",
            "Export anything you need from the other one.",
            "Cancel any subscription on the account you will close.",
            "Close it under Settings > Privacy.",
            "Add the freed email to the kept account if you want.",
            "Past orders stay with the closed account's export.",
        ],
    ),
]
ACCOUNT_SLOTS: dict[str, list[Any]] = {
    "device": ["the iPhone app", "the Android app", "the web app", "a shared laptop"],
    "plan": ["Basic", "Plus", "Pro", "Team"],
    "hours": [2, 24, 48],
    "n": [10, 12, 15, 30],
    "days": [3, 7, 14],
}
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
ACCOUNT_BAIL = (
    "I'm sorry, I couldn't find enough in the account help articles to answer this reliably. "
    "Please contact support so an agent can check your account."
)
ACCOUNT_INTROS = ["Here is how to do it.", "You can do this yourself in a few steps.", "This takes a minute."]
ACCOUNT_CRITERIA = ("answers_question", "accurate", "concise")
