//! The delivery-timeout card's Retry control: runs where the card shows, again and again,
//! and the executor never clicks it (the conversation hosts would take the click, re-send
//! the last message and record it: `chat.rs` tests that path).

use sim::world;

#[test]
fn delivery_timeout_runs_offer_retry_and_never_click_it() {
    let files = [
        ("delivery-timeout.scn", include_str!("../../scenarios/delivery-timeout.scn")),
        ("delivery-timeout-at-submission.scn", include_str!("../../scenarios/delivery-timeout-at-submission.scn")),
    ];
    for (name, text) in files {
        let s = sim::scenario::parse(name, text).expect("the scenario parses");
        let outcome = world::run(&s.knobs, &s.plan);
        assert!(outcome.retry_offers > 0, "{name}: the card never showed, so zero clicks prove nothing");
        assert_eq!(outcome.retry_clicks, 0, "{name}: {:?}", outcome.violations);
        assert!(outcome.violations.is_empty(), "{name}: {:?}", outcome.violations);
        assert!(outcome.fresh_continues > 0, "{name}: no fresh continue followed the card");
        assert!(sim::scenario::verify(&s, &outcome).is_empty(), "{name}: {:?}", sim::scenario::verify(&s, &outcome));
    }
}
