//! A minimal bot on the code docs/PROTOCOL.md's Rust recipe generates: it passes its first three
//! cards and plays the first legal card. HEARTS_SERVER is host:port, HEARTS_TOKEN_FILE the token.

pub mod pb {
    tonic::include_proto!("cancellation_hearts.v1");
}

use pb::referee_service_client::RefereeServiceClient;
use pb::{DecisionKind, MoonChoice, PlayRequest, decision, play_request, play_response};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let token = std::fs::read_to_string(std::env::var("HEARTS_TOKEN_FILE")?)?.trim().to_owned();
    let server = format!("http://{}", std::env::var("HEARTS_SERVER")?);
    let mut client = RefereeServiceClient::connect(server).await?;
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    let join = pb::Join { token, bot_name: "recipe-rust".into(), protocol_version: 1, ..Default::default() };
    tx.send(PlayRequest { message: Some(play_request::Message::Join(join)) }).await?;
    let mut responses = client.play(tokio_stream::wrappers::ReceiverStream::new(rx)).await?.into_inner();
    while let Some(response) = responses.message().await? {
        let Some(play_response::Message::DecisionRequest(request)) = response.message else { continue };
        let answer = match request.kind() {
            DecisionKind::Pass => {
                let cards = request.view.unwrap_or_default().hand.into_iter().take(3).collect();
                decision::Answer::PassCards(pb::PassCards { cards })
            }
            DecisionKind::Play => decision::Answer::PlayCard(pb::PlayCard { card: request.legal_cards[0].clone() }),
            _ => decision::Answer::ChooseMoon(pb::ChooseMoon { choice: MoonChoice::SelfMinus26.into() }),
        };
        let decision = pb::Decision { request_id: request.request_id, answer: Some(answer), ..Default::default() };
        tx.send(PlayRequest { message: Some(play_request::Message::Decision(decision)) }).await?;
    }
    Ok(())
}
