//! A small example Cancellation Hearts bot: it plays one seat over the referee's gRPC bot
//! protocol (proto/cancellation_hearts/v1/referee_service.proto) with tonic.
//!
//!     bot --server TARGET --token-file FILE [--name NAME]
//!
//! TARGET is HOST:PORT or unix:PATH (the referee's Unix socket, the only way out of the
//! tournament's sandbox). The seat token is the text of FILE, whitespace stripped; --token TOKEN
//! gives it directly, for manual use (a command line is visible to other processes).

mod strategy;

/// The code generated from proto/ by build.rs.
pub mod pb {
    tonic::include_proto!("cancellation_hearts.v1");
}

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

use pb::referee_service_client::RefereeServiceClient;
use pb::{DecisionKind, DecisionRequest, MoonChoice, PlayRequest};
use pb::{decision, event, play_request, play_response};

const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);
const GIVE_UP_AFTER: Duration = Duration::from_secs(30);

/// An example Cancellation Hearts bot.
#[derive(Parser)]
struct Args {
    /// The referee: HOST:PORT, or unix:PATH for its Unix socket.
    #[arg(long, env = "HEARTS_SERVER", default_value = "127.0.0.1:50051", value_name = "TARGET")]
    server: String,
    /// A file holding the seat's secret token (its text, whitespace stripped).
    #[arg(long, env = "HEARTS_TOKEN_FILE", value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// The seat's secret token, for manual use (prefer --token-file).
    #[arg(long, env = "HEARTS_TOKEN")]
    token: Option<String>,
    /// The bot's name, for the referee's logs.
    #[arg(long, env = "HEARTS_BOT_NAME", default_value = "rust-example")]
    name: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = Args::parse();
    let token = match read_token(args.token.as_deref(), args.token_file.as_deref()) {
        Ok(token) => token,
        Err(message) => {
            eprintln!("rust-bot: {message}");
            return ExitCode::from(2);
        }
    };
    // tonic connects to "unix:PATH" (and "unix://PATH") itself; HOST:PORT needs a scheme.
    let uri = if args.server.starts_with("unix:") {
        args.server.clone()
    } else {
        format!("http://{}", args.server)
    };
    let channel = match Endpoint::from_shared(uri) {
        Ok(endpoint) => endpoint.connect_lazy(),
        Err(err) => {
            eprintln!("rust-bot: bad --server {}: {err}", args.server);
            return ExitCode::FAILURE;
        }
    };
    let client = RefereeServiceClient::new(channel);

    // Play until the stream ends with OK. When it breaks, reconnect at once (the referee plays
    // for an absent seat, each time with a fault), then back off from 0.1 s to 2 s.
    let (mut backoff, mut failing_since) = (Duration::ZERO, Instant::now());
    loop {
        let (progressed, result) = play(client.clone(), &token, &args.name).await;
        let status = match result {
            Ok(()) => {
                eprintln!("rust-bot: the table's games are over");
                return ExitCode::SUCCESS;
            }
            Err(status) => status,
        };
        // tonic reports a reset connection as UNKNOWN; RESOURCE_EXHAUSTED is the referee closing a
        // flooding stream and asking for a reconnection.
        let retryable = matches!(
            status.code(),
            Code::Unavailable
                | Code::Cancelled
                | Code::AlreadyExists
                | Code::Internal
                | Code::Unknown
                | Code::ResourceExhausted
        );
        if !retryable {
            eprintln!("rust-bot: the referee ended the stream: {:?}: {}", status.code(), status.message());
            return ExitCode::FAILURE;
        }
        if progressed {
            (backoff, failing_since) = (Duration::ZERO, Instant::now());
        }
        if failing_since.elapsed() > GIVE_UP_AFTER {
            eprintln!("rust-bot: giving up after {GIVE_UP_AFTER:?} of failures: {status}");
            return ExitCode::FAILURE;
        }
        eprintln!(
            "rust-bot: stream broken ({:?}: {}); reconnecting in {backoff:?}",
            status.code(),
            status.message()
        );
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).clamp(FIRST_BACKOFF, MAX_BACKOFF);
    }
}

/// Runs one stream: join, then answer every decision request. Returns whether anything was
/// received (the join worked) and Ok when the referee closed the stream with OK.
async fn play(
    mut client: RefereeServiceClient<Channel>,
    token: &str,
    name: &str,
) -> (bool, Result<(), Status>) {
    let (tx, rx) = mpsc::channel(8);
    let join = pb::Join {
        token: token.to_owned(),
        bot_name: name.to_owned(),
        protocol_version: 1,
        ..Default::default()
    };
    let _ = tx.send(PlayRequest { message: Some(play_request::Message::Join(join)) }).await;
    let mut responses = match client.play(ReceiverStream::new(rx)).await {
        Ok(response) => response.into_inner(),
        Err(status) => return (false, Err(status)),
    };

    let mut progressed = false;
    let mut open: Option<DecisionRequest> = None; // the last request, answered again after a rejection
    let mut retried = false;
    loop {
        let message = match responses.message().await {
            Ok(Some(response)) => response.message,
            Ok(None) => return (true, Ok(())),
            Err(status) => return (progressed, Err(status)),
        };
        progressed = true;
        // A failed send means the stream is gone; the next message() reports why.
        match message {
            Some(play_response::Message::Event(e)) => log_event(e.event),
            // A batch means the same as its events one by one.
            Some(play_response::Message::Events(batch)) => {
                batch.events.into_iter().for_each(|e| log_event(e.event))
            }
            Some(play_response::Message::Snapshot(s)) => {
                let view = s.view.unwrap_or_default();
                eprintln!("rust-bot: reconnected: hand {}, phase {:?}", view.hand_index, view.phase());
            }
            Some(play_response::Message::DecisionRequest(request)) => {
                match decide(&request) {
                    Some(answer) => {
                        let _ = tx.send(answer).await;
                    }
                    // A kind newer than this bot: the referee's default answers it in time.
                    None => eprintln!(
                        "rust-bot: request {}: unknown decision kind {}, left to the referee",
                        request.request_id, request.kind
                    ),
                }
                (open, retried) = (Some(request), false);
            }
            Some(play_response::Message::Rejection(r)) => {
                eprintln!(
                    "rust-bot: rejected (request {}): {:?}: {}",
                    r.request_id,
                    r.rejection_code(),
                    r.reason
                );
                // Answer the still-open request once more, with the safest answer there is.
                if let Some(request) = open.as_ref().filter(|q| q.request_id == r.request_id)
                    && !retried
                    && retryable(r.rejection_code)
                    && let Some(answer) = fallback(request)
                {
                    retried = true;
                    let _ = tx.send(answer).await;
                }
            }
            None => {}
        }
    }
}

/// The seat token: the text of `token_file` (whitespace stripped) when given, else `token`.
fn read_token(token: Option<&str>, token_file: Option<&std::path::Path>) -> Result<String, String> {
    if let Some(path) = token_file.filter(|p| !p.as_os_str().is_empty()) {
        let text = std::fs::read_to_string(path)
            .map_err(|err| format!("cannot read the token file {}: {err}", path.display()))?;
        let text = text.trim();
        if text.is_empty() {
            return Err(format!("the token file {} is empty", path.display()));
        }
        return Ok(text.to_owned());
    }
    match token.filter(|t| !t.is_empty()) {
        Some(token) => Ok(token.to_owned()),
        None => {
            Err("a seat token is needed: --token-file FILE (HEARTS_TOKEN_FILE) or --token T (HEARTS_TOKEN)"
                .to_owned())
        }
    }
}

fn answer(request: &DecisionRequest, answer: decision::Answer) -> PlayRequest {
    let decision =
        pb::Decision { request_id: request.request_id, answer: Some(answer), ..Default::default() };
    PlayRequest { message: Some(play_request::Message::Decision(decision)) }
}

/// Whether a rejection is worth answering again within the same request: the rule codes,
/// UNKNOWN_CARD and WRONG_ANSWER; not STALE_REQUEST or NOT_YOUR_TURN (wait for the next
/// request), MALFORMED or UNEXPECTED (a bug here), nor a code newer than this bot.
fn retryable(code: i32) -> bool {
    use pb::RejectionCode as C;
    matches!(
        C::try_from(code),
        Ok(C::NotInHand
            | C::MustFollowSuit
            | C::HeartsNotBroken
            | C::FirstLeadRestricted
            | C::BadPassCount
            | C::PassNotInHand
            | C::BadMoonChoice
            | C::UnknownCard
            | C::WrongAnswer)
    )
}

/// The bot's answer, or None for a decision kind this bot does not know.
fn decide(request: &DecisionRequest) -> Option<PlayRequest> {
    let view = request.view.clone().unwrap_or_default();
    let chosen = match DecisionKind::try_from(request.kind).ok()? {
        DecisionKind::Pass => {
            decision::Answer::PassCards(pb::PassCards { cards: strategy::choose_pass(&view.hand) })
        }
        DecisionKind::Play => {
            let trick = view.current_trick.map(|t| t.cards).unwrap_or_default();
            decision::Answer::PlayCard(pb::PlayCard {
                card: strategy::choose_play(&request.legal_cards, &trick),
            })
        }
        DecisionKind::Moon => {
            decision::Answer::ChooseMoon(pb::ChooseMoon { choice: MoonChoice::SelfMinus26.into() })
        }
        _ => return None,
    };
    Some(answer(request, chosen))
}

/// The plainest answer: the first legal card, or the first three cards of the hand.
fn fallback(request: &DecisionRequest) -> Option<PlayRequest> {
    match request.kind() {
        DecisionKind::Pass => {
            let hand = request.view.as_ref().map(|v| v.hand.clone()).unwrap_or_default();
            Some(answer(
                request,
                decision::Answer::PassCards(pb::PassCards { cards: hand.into_iter().take(3).collect() }),
            ))
        }
        DecisionKind::Play => {
            let card = request.legal_cards.first().cloned().unwrap_or_default();
            Some(answer(request, decision::Answer::PlayCard(pb::PlayCard { card })))
        }
        _ => decide(request),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_only_what_the_enum_says_is_worth_it() {
        assert!(retryable(pb::RejectionCode::MustFollowSuit as i32));
        assert!(retryable(pb::RejectionCode::UnknownCard as i32));
        assert!(!retryable(pb::RejectionCode::StaleRequest as i32));
        assert!(!retryable(pb::RejectionCode::NotYourTurn as i32));
        assert!(!retryable(pb::RejectionCode::Malformed as i32));
        assert!(!retryable(pb::RejectionCode::Unspecified as i32));
        assert!(!retryable(99)); // newer than this bot
    }

    #[test]
    fn an_unknown_decision_kind_is_left_to_the_referee() {
        let unknown = DecisionRequest { request_id: 7, kind: 42, ..Default::default() };
        assert!(decide(&unknown).is_none() && fallback(&unknown).is_none());
        let moon = DecisionRequest { request_id: 8, kind: DecisionKind::Moon as i32, ..Default::default() };
        assert!(matches!(
            decide(&moon).and_then(|r| r.message),
            Some(play_request::Message::Decision(pb::Decision {
                answer: Some(decision::Answer::ChooseMoon(_)),
                ..
            }))
        ));
    }
}

fn log_event(event: Option<event::Event>) {
    match event {
        Some(event::Event::GameStarted(g)) => eprintln!(
            "rust-bot: game {} ({} of {}): seat {} of {}",
            g.game_id,
            g.game_number + 1,
            g.games_total,
            g.your_seat.unwrap_or_default(),
            g.players
        ),
        Some(event::Event::HandCompleted(h)) => {
            eprintln!("rust-bot: hand {} over: totals {:?}", h.hand_index, h.totals)
        }
        Some(event::Event::GameCompleted(g)) => {
            eprintln!("rust-bot: game over: totals {:?}, winners {:?}", g.totals, g.winners)
        }
        Some(event::Event::SeatFaulted(f)) => {
            eprintln!("rust-bot: fault: seat {} {:?}: {}", f.seat, f.kind(), f.detail)
        }
        _ => {}
    }
}
