//! Rough wall-clock timings of the core's parts: `cargo run --release --example speed`.
use hearts_sim_core::deal::deal_hand;
use hearts_sim_core::game::{DealMode, Game, Rules};
use hearts_sim_core::policy::{play_out, Named};
use std::time::Instant;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("random") {
        // Only random hands with the fast deal, for a profiler (`perf record`).
        let rules = Rules::new(8, 1 << 40, 1 << 40, 0).expect("rules");
        let mut g = Game::with_deal(rules, "bench", DealMode::Fast);
        let n: u32 = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(2_000_000);
        let t = Instant::now();
        for _ in 0..n {
            play_out(&mut g, Named::Random, true);
        }
        println!("random hand, fast deal: {:.3} us", t.elapsed().as_secs_f64() * 1e6 / f64::from(n));
        return;
    }
    let n = 100_000;
    let t = Instant::now();
    let mut x = 0;
    for i in 0..n {
        let (h, _) = deal_hand(8, "bench", i);
        x ^= h[0].once;
    }
    println!("referee deal: {:.2} us ({x:x})", t.elapsed().as_secs_f64() * 1e6 / f64::from(n));
    let rules = Rules::new(8, 1 << 40, 1 << 40, 0).expect("rules");
    for (mode, name) in [(DealMode::Referee, "referee"), (DealMode::Fast, "fast")] {
        let mut g = Game::with_deal(rules, "bench", mode);
        let t = Instant::now();
        for _ in 0..n {
            play_out(&mut g, Named::Random, true);
        }
        println!("random hand, {name} deal: {:.2} us", t.elapsed().as_secs_f64() * 1e6 / f64::from(n));
        let t = Instant::now();
        for _ in 0..n / 10 {
            play_out(&mut g, Named::Heuristic, true);
        }
        println!("heuristic hand, {name} deal: {:.2} us", t.elapsed().as_secs_f64() * 1e6 / f64::from(n / 10));
    }
}
