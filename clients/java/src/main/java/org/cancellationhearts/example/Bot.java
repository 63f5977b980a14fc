package org.cancellationhearts.example;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.cancellationhearts.v1.ChooseMoon;
import org.cancellationhearts.v1.Decision;
import org.cancellationhearts.v1.DecisionRequest;
import org.cancellationhearts.v1.Event;
import org.cancellationhearts.v1.Join;
import org.cancellationhearts.v1.MoonChoice;
import org.cancellationhearts.v1.PassCards;
import org.cancellationhearts.v1.PlayCard;
import org.cancellationhearts.v1.PlayRequest;
import org.cancellationhearts.v1.PlayResponse;
import org.cancellationhearts.v1.RefereeServiceGrpc;
import org.cancellationhearts.v1.Rejection;

/**
 * An example Cancellation Hearts bot: joins its seat over gRPC, answers every decision request
 * with {@link Strategy}, and reconnects with the same token if the stream breaks.
 *
 * <p>Usage: {@code java -jar target/java-example-bot.jar --server TARGET --token-file FILE [--name NAME]}
 * (or the environment variables HEARTS_SERVER, HEARTS_TOKEN_FILE, HEARTS_BOT_NAME; flags win).
 * TARGET is {@code HOST:PORT} or {@code unix:PATH}, the referee's Unix socket (the only way out of
 * the tournament's sandbox; grpc-netty's {@code unix:} name resolver and epoll domain sockets).
 * The seat token is the text of FILE, whitespace stripped; {@code --token TOKEN} (HEARTS_TOKEN)
 * gives it directly, for manual use (a command line is visible to other processes).
 */
public final class Bot {
    private static final int PROTOCOL_VERSION = 1;
    /** Stream endings that retrying cannot fix. Any other error is treated as a broken stream. */
    private static final EnumSet<Status.Code> FATAL = EnumSet.of(
            Status.Code.UNAUTHENTICATED, Status.Code.FAILED_PRECONDITION, Status.Code.INVALID_ARGUMENT,
            Status.Code.PERMISSION_DENIED, Status.Code.UNIMPLEMENTED, Status.Code.NOT_FOUND);
    private static final long FIRST_BACKOFF_MS = 100;
    private static final long MAX_BACKOFF_MS = 2_000;
    private static final long GIVE_UP_MS = 30_000;
    /**
     * Netty warnings that are no news here, quieted: once per connection that a domain socket has
     * no SO_KEEPALIVE (gRPC sets it for every transport), and, in a sandbox without network
     * interfaces, that it found no MAC address for its channel ids. Held here: java.util.logging
     * keeps loggers weakly.
     */
    private static final List<Logger> QUIET_LOGGERS = List.of(
            Logger.getLogger("io.grpc.netty.shaded.io.netty.bootstrap"),
            Logger.getLogger("io.grpc.netty.shaded.io.netty.util.internal.MacAddressUtil"));

    private final ManagedChannel channel;
    private final String token;
    private final String name;
    private int seat = -1;

    Bot(ManagedChannel channel, String token, String name) {
        this.channel = channel;
        this.token = token;
        this.name = name;
    }

    public static void main(String[] args) throws InterruptedException {
        Options opts = Options.parse(args);
        QUIET_LOGGERS.forEach(logger -> logger.setLevel(Level.SEVERE));
        String token = readToken(opts.token(), opts.tokenFile());
        // Grpc.newChannelBuilder picks the transport that can reach the target's addresses: Netty over
        // TCP for HOST:PORT, Netty over epoll domain sockets for unix:PATH.
        ManagedChannel channel = Grpc.newChannelBuilder(target(opts.server()), InsecureChannelCredentials.create())
                .build();
        int exitCode = new Bot(channel, token, opts.name()).run();
        channel.shutdownNow().awaitTermination(1, TimeUnit.SECONDS);
        System.exit(exitCode);
    }

    /**
     * The seat token: the text of {@code tokenFile} (whitespace stripped) when given, else
     * {@code token}; exits 2 with one line when there is none.
     */
    static String readToken(String token, String tokenFile) {
        if (tokenFile != null) {
            String text;
            try {
                text = Files.readString(Path.of(tokenFile), StandardCharsets.US_ASCII).strip();
            } catch (IOException | RuntimeException e) {
                die("cannot read the token file " + tokenFile + ": " + e);
                return null; // not reached
            }
            if (text.isEmpty()) {
                die("the token file " + tokenFile + " is empty");
            }
            return text;
        }
        if (token == null) {
            die("a seat token is needed: --token-file FILE (HEARTS_TOKEN_FILE) or --token T (HEARTS_TOKEN)");
        }
        return token;
    }

    /** The gRPC target: {@code unix:PATH} with PATH made absolute (grpc-java's resolver needs it). */
    static String target(String server) {
        if (server.startsWith("unix:") && !server.startsWith("unix:/")) {
            return "unix:" + Path.of(server.substring("unix:".length())).toAbsolutePath();
        }
        return server;
    }

    /** Plays until the table is done (0) or a fatal error (1); reconnects on broken streams. */
    int run() throws InterruptedException {
        long backoff = FIRST_BACKOFF_MS;
        long failingSince = -1;
        while (true) {
            Outcome outcome = playOneStream();
            Status status = outcome.status();
            if (status.isOk()) {
                log("the table's games are over; bye");
                return 0;
            }
            if (FATAL.contains(status.getCode())) {
                log("error: the referee ended the stream with %s", explain(status));
                return 1;
            }
            long now = System.nanoTime();
            if (outcome.heardFromReferee() || failingSince < 0) {
                failingSince = now;
                backoff = FIRST_BACKOFF_MS;
            }
            if (TimeUnit.NANOSECONDS.toMillis(now - failingSince) > GIVE_UP_MS) {
                log("error: no stream to the referee for %d s, giving up (last: %s). Is it running at this address?",
                        GIVE_UP_MS / 1000, explain(status));
                return 1;
            }
            log("stream broken (%s); reconnecting in %d ms", explain(status), backoff);
            channel.resetConnectBackoff(); // reconnect now, not on gRPC's slower schedule
            Thread.sleep(backoff);
            backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        }
    }

    private record Outcome(Status status, boolean heardFromReferee) {}

    /** Opens one Play stream, joins, and answers requests until the stream ends. */
    private Outcome playOneStream() throws InterruptedException {
        // gRPC calls the observer on its own threads; hand everything to this thread via a queue,
        // so that only this thread ever sends on the stream.
        BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        StreamObserver<PlayRequest> stream = RefereeServiceGrpc.newStub(channel).play(new StreamObserver<>() {
            @Override public void onNext(PlayResponse response) { inbox.add(response); }
            @Override public void onError(Throwable t) { inbox.add(Status.fromThrowable(t)); }
            @Override public void onCompleted() { inbox.add(Status.OK); }
        });
        stream.onNext(PlayRequest.newBuilder()
                .setJoin(Join.newBuilder().setToken(token).setBotName(name).setProtocolVersion(PROTOCOL_VERSION))
                .build());

        boolean heard = false;
        DecisionRequest open = null; // the last request, kept to answer again after a rejection
        boolean retried = false;
        while (true) {
            Object message = inbox.take();
            if (message instanceof Status status) {
                if (status.isOk()) {
                    stream.onCompleted();
                }
                return new Outcome(status, heard);
            }
            heard = true;
            PlayResponse response = (PlayResponse) message;
            switch (response.getMessageCase()) {
                case EVENT -> onEvent(response.getEvent());
                case EVENTS -> response.getEvents().getEventsList().forEach(this::onEvent);
                case SNAPSHOT -> log("reconnected: hand %d, phase %s",
                        response.getSnapshot().getView().getHandIndex(), response.getSnapshot().getView().getPhase());
                case DECISION_REQUEST -> {
                    open = response.getDecisionRequest();
                    retried = false;
                    stream.onNext(PlayRequest.newBuilder().setDecision(decide(open)).build());
                }
                case REJECTION -> {
                    Rejection rejection = response.getRejection();
                    log("answer rejected: %s: %s", rejection.getCode(), rejection.getReason());
                    if (open != null && rejection.getRequestId() == open.getRequestId() && !retried) {
                        retried = true;
                        stream.onNext(PlayRequest.newBuilder().setDecision(fallback(open)).build());
                    }
                }
                default -> { } // a kind of message newer than this bot: nothing it needs
            }
        }
    }

    /** The strategy's answer to a request. */
    static Decision decide(DecisionRequest request) {
        Decision.Builder decision = Decision.newBuilder().setRequestId(request.getRequestId());
        return switch (request.getKind()) {
            case DECISION_KIND_PASS -> decision
                    .setPassCards(PassCards.newBuilder().addAllCards(Strategy.pass(request.getView().getHandList())))
                    .build();
            case DECISION_KIND_PLAY -> decision
                    .setPlayCard(PlayCard.newBuilder().setCard(Strategy.play(
                            request.getLegalCardsList(), request.getView().getCurrentTrick().getCardsList())))
                    .build();
            default -> fallback(request);
        };
    }

    /** A safe answer: the first legal card, the first three cards of the hand, or -26 for us. */
    static Decision fallback(DecisionRequest request) {
        Decision.Builder decision = Decision.newBuilder().setRequestId(request.getRequestId());
        return switch (request.getKind()) {
            case DECISION_KIND_PASS -> decision
                    .setPassCards(PassCards.newBuilder().addAllCards(request.getView().getHandList().subList(0, 3)))
                    .build();
            case DECISION_KIND_PLAY -> decision
                    .setPlayCard(PlayCard.newBuilder().setCard(request.getLegalCards(0)))
                    .build();
            default -> decision
                    .setChooseMoon(ChooseMoon.newBuilder().setChoice(MoonChoice.MOON_CHOICE_SELF_MINUS_26))
                    .build();
        };
    }

    private void onEvent(Event event) {
        switch (event.getEventCase()) {
            case GAME_STARTED -> {
                var started = event.getGameStarted();
                seat = started.getYourSeat();
                log("game %s (%d of %d): seat %d of %d", started.getGameId(), started.getGameNumber() + 1,
                        started.getGamesTotal(), seat, started.getPlayers());
            }
            case HAND_COMPLETED -> {
                var hand = event.getHandCompleted();
                log("hand %d: %d points, total %d", hand.getHandIndex(), hand.getScores(seat), hand.getTotals(seat));
            }
            case GAME_COMPLETED -> {
                var result = event.getGameCompleted().getResults(seat); // results are in seat order
                log("game over: total %d, place %d, faults %d", result.getTotal(), result.getPlace(), result.getFaults());
            }
            case SEAT_FAULTED -> {
                var fault = event.getSeatFaulted();
                if (fault.getSeat() == seat) {
                    log("fault: %s: %s", fault.getKind(), fault.getDetail());
                }
            }
            default -> { } // hands dealt, cards played, tricks: the next request's View has them all
        }
    }

    private static String explain(Status status) {
        String hint = switch (status.getCode()) {
            case UNAUTHENTICATED -> " (check the token)";
            case FAILED_PRECONDITION -> " (the table's games are over: is this an old token?)";
            default -> "";
        };
        String description = status.getDescription() == null ? "" : ": " + status.getDescription();
        return status.getCode() + description + hint;
    }

    private void log(String format, Object... args) {
        System.err.printf("[%s] %s%n", name, String.format(format, args));
    }

    private static void die(String message) {
        System.err.println("java-example: error: " + message);
        System.exit(2);
    }

    /**
     * The command line: --server/--token-file/--token/--name (or --flag=value), else the
     * environment, else defaults.
     */
    record Options(String server, String tokenFile, String token, String name) {
        static Options parse(String[] args) {
            String server = env("HEARTS_SERVER", "127.0.0.1:50051");
            String tokenFile = env("HEARTS_TOKEN_FILE", null);
            String token = env("HEARTS_TOKEN", null);
            String name = env("HEARTS_BOT_NAME", "java-example");
            for (int i = 0; i < args.length; i++) {
                String flag = args[i];
                String value = null;
                int eq = flag.indexOf('=');
                if (flag.startsWith("--") && eq > 0) {
                    value = flag.substring(eq + 1);
                    flag = flag.substring(0, eq);
                }
                if (flag.equals("-h") || flag.equals("--help")) {
                    System.out.println("usage: bot [--server HOST:PORT|unix:PATH] --token-file FILE [--name NAME]\n"
                            + "       (or --token TOKEN instead of --token-file, for manual use)\n"
                            + "environment: HEARTS_SERVER (default 127.0.0.1:50051), HEARTS_TOKEN_FILE,"
                            + " HEARTS_TOKEN, HEARTS_BOT_NAME");
                    System.exit(0);
                }
                if (!List.of("--server", "--token-file", "--token", "--name").contains(flag)) {
                    die("unknown argument " + args[i] + " (try --help)");
                }
                if (value == null) {
                    if (i + 1 >= args.length) {
                        die(flag + " needs a value");
                    }
                    value = args[++i];
                }
                switch (flag) {
                    case "--server" -> server = value;
                    case "--token-file" -> tokenFile = value.isEmpty() ? null : value;
                    case "--token" -> token = value.isEmpty() ? null : value;
                    default -> name = value;
                }
            }
            return new Options(server, tokenFile, token, name);
        }

        private static String env(String variable, String fallback) {
            String value = System.getenv(variable);
            return value == null || value.isEmpty() ? fallback : value;
        }
    }
}
