// A minimal bot on the code docs/PROTOCOL.md's Java recipe generates: it passes its first three
// cards and plays the first legal card. HEARTS_SERVER is host:port, HEARTS_TOKEN_FILE the token.
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import org.cancellationhearts.v1.ChooseMoon;
import org.cancellationhearts.v1.Decision;
import org.cancellationhearts.v1.DecisionRequest;
import org.cancellationhearts.v1.Join;
import org.cancellationhearts.v1.MoonChoice;
import org.cancellationhearts.v1.PassCards;
import org.cancellationhearts.v1.PlayCard;
import org.cancellationhearts.v1.PlayRequest;
import org.cancellationhearts.v1.PlayResponse;
import org.cancellationhearts.v1.RefereeServiceGrpc;

public final class Bot implements StreamObserver<PlayResponse> {
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private StreamObserver<PlayRequest> requests;

    public static void main(String[] args) throws Exception {
        String token = Files.readString(Path.of(System.getenv("HEARTS_TOKEN_FILE"))).strip();
        ManagedChannel channel =
                Grpc.newChannelBuilder(System.getenv("HEARTS_SERVER"), InsecureChannelCredentials.create()).build();
        Bot bot = new Bot();
        bot.requests = RefereeServiceGrpc.newStub(channel).play(bot);
        Join join = Join.newBuilder().setToken(token).setBotName("recipe-java").setProtocolVersion(1).build();
        bot.requests.onNext(PlayRequest.newBuilder().setJoin(join).build());
        try {
            bot.done.get();
        } finally {
            channel.shutdownNow();
        }
    }

    @Override
    public void onNext(PlayResponse response) {
        if (response.hasDecisionRequest()) {
            requests.onNext(PlayRequest.newBuilder().setDecision(decide(response.getDecisionRequest())).build());
        }
    }

    @Override
    public void onError(Throwable error) {
        done.completeExceptionally(error);
    }

    @Override
    public void onCompleted() {
        done.complete(null);
    }

    private static Decision decide(DecisionRequest request) {
        Decision.Builder decision = Decision.newBuilder().setRequestId(request.getRequestId());
        switch (request.getKind()) {
            case DECISION_KIND_PASS -> decision.setPassCards(
                    PassCards.newBuilder().addAllCards(request.getView().getHandList().subList(0, 3)));
            case DECISION_KIND_PLAY -> decision.setPlayCard(PlayCard.newBuilder().setCard(request.getLegalCards(0)));
            default -> decision.setChooseMoon(ChooseMoon.newBuilder().setChoice(MoonChoice.MOON_CHOICE_SELF_MINUS_26));
        }
        return decision.build();
    }
}
