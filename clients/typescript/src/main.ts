// An example Cancellation Hearts bot: joins its seat over gRPC, answers every decision request
// with the strategy in strategy.ts, and reconnects with the same token if the stream breaks.
//
// Usage: node dist/main.js --server TARGET --token-file FILE [--name NAME]
// (or the environment variables HEARTS_SERVER, HEARTS_TOKEN_FILE, HEARTS_BOT_NAME; flags win).
// TARGET is HOST:PORT or unix:PATH, the referee's Unix socket (the only way out of the
// tournament's sandbox; grpc-js resolves unix: targets itself). The seat token is the text of
// FILE, whitespace stripped; --token TOKEN (HEARTS_TOKEN) gives it directly, for manual use (a
// command line is visible to other processes).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/referee_service';
import type { Decision } from './generated/cancellation_hearts/v1/Decision';
import type { DecisionRequest__Output } from './generated/cancellation_hearts/v1/DecisionRequest';
import type { Event__Output } from './generated/cancellation_hearts/v1/Event';
import type { PlayResponse__Output } from './generated/cancellation_hearts/v1/PlayResponse';
import type { RefereeServiceClient } from './generated/cancellation_hearts/v1/RefereeService';
import { choosePass, choosePlay } from './strategy';

const PROTOCOL_VERSION = 1;
// The build copies the .proto files next to the compiled code: the bot needs only its own folder.
const PROTO_DIR = path.resolve(__dirname, 'proto');
// These must match the flags given to proto-loader-gen-types in package.json ("generate").
const LOADER_OPTIONS: protoLoader.Options = {
  longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [PROTO_DIR],
};
/** Stream endings that retrying cannot fix. Any other error is treated as a broken stream. */
const FATAL = new Set([
  grpc.status.UNAUTHENTICATED, grpc.status.FAILED_PRECONDITION, grpc.status.INVALID_ARGUMENT,
  grpc.status.PERMISSION_DENIED, grpc.status.UNIMPLEMENTED, grpc.status.NOT_FOUND,
]);
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 2_000;
const GIVE_UP_MS = 30_000;

interface Options { server: string; token: string; name: string }

let botName = 'typescript-example';
const log = (message: string): void => console.error(`[${botName}] ${message}`);

function fail(message: string): never {
  console.error(`typescript-example: error: ${message}`);
  process.exit(2);
}

/** The seat token: the text of `tokenFile` (whitespace stripped) when given, else `token`. */
function readToken(token: string | undefined, tokenFile: string | undefined): string {
  if (tokenFile) {
    let text: string;
    try {
      text = fs.readFileSync(tokenFile, 'ascii').trim();
    } catch (error) {
      fail(`cannot read the token file ${tokenFile}: ${(error as Error).message}`);
    }
    if (!text) {
      fail(`the token file ${tokenFile} is empty`);
    }
    return text;
  }
  if (!token) {
    fail('a seat token is needed: --token-file FILE (HEARTS_TOKEN_FILE) or --token T (HEARTS_TOKEN)');
  }
  return token;
}

/** --server/--token-file/--token/--name (or --flag=value), else the environment, else defaults. */
function parseOptions(args: string[]): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        server: { type: 'string' }, 'token-file': { type: 'string' }, token: { type: 'string' },
        name: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    fail(`${(error as Error).message} (try --help)`);
  }
  if (values.help) {
    console.log('usage: bot [--server HOST:PORT|unix:PATH] --token-file FILE [--name NAME]\n'
      + '       (or --token TOKEN instead of --token-file, for manual use)\n'
      + 'environment: HEARTS_SERVER (default 127.0.0.1:50051), HEARTS_TOKEN_FILE, HEARTS_TOKEN,'
      + ' HEARTS_BOT_NAME');
    process.exit(0);
  }
  const env = (name: string): string | undefined => process.env[name] || undefined;
  const token = readToken(
    values.token || env('HEARTS_TOKEN'), values['token-file'] || env('HEARTS_TOKEN_FILE'),
  );
  return {
    server: values.server || env('HEARTS_SERVER') || '127.0.0.1:50051',
    token,
    name: values.name || env('HEARTS_BOT_NAME') || 'typescript-example',
  };
}

/** The strategy's answer to a request. */
function decide(request: DecisionRequest__Output): Decision {
  const { requestId, view, legalCards } = request;
  switch (request.kind) {
    case 'DECISION_KIND_PASS':
      return { requestId, passCards: { cards: choosePass(view?.hand ?? []) } };
    case 'DECISION_KIND_PLAY':
      return { requestId, playCard: { card: choosePlay(legalCards, view?.currentTrick?.cards ?? []) } };
    default:
      return fallback(request);
  }
}

/** A safe answer: the first legal card, the first three cards of the hand, or -26 for us. */
function fallback(request: DecisionRequest__Output): Decision {
  const { requestId, view, legalCards } = request;
  switch (request.kind) {
    case 'DECISION_KIND_PASS':
      return { requestId, passCards: { cards: (view?.hand ?? []).slice(0, 3) } };
    case 'DECISION_KIND_PLAY':
      return { requestId, playCard: { card: legalCards[0] } };
    default:
      return { requestId, chooseMoon: { choice: 'MOON_CHOICE_SELF_MINUS_26' } };
  }
}

let seat = -1;

function onEvent(event: Event__Output): void {
  const { gameStarted, handCompleted, gameCompleted, seatFaulted } = event;
  if (gameStarted) {
    seat = gameStarted.yourSeat ?? -1;
    log(`game ${gameStarted.gameId} (${gameStarted.gameNumber + 1} of ${gameStarted.gamesTotal}): `
      + `seat ${seat} of ${gameStarted.players}`);
  } else if (handCompleted) {
    log(`hand ${handCompleted.handIndex}: ${handCompleted.scores[seat]} points, total ${handCompleted.totals[seat]}`);
  } else if (gameCompleted) {
    const result = gameCompleted.results[seat]; // results are in seat order
    log(`game over: total ${result?.total}, place ${result?.place}, faults ${result?.faults}`);
  } else if (seatFaulted && seatFaulted.seat === seat) {
    log(`fault: ${seatFaulted.kind}: ${seatFaulted.detail}`);
  }
  // Hands dealt, cards played, tricks: the next request's View has them all.
}

interface Outcome { status: grpc.StatusObject; heardFromReferee: boolean }

/** Opens one Play stream, joins, and answers requests until the stream ends. */
function playOneStream(client: RefereeServiceClient, options: Options): Promise<Outcome> {
  return new Promise((resolve) => {
    const stream = client.Play();
    let heardFromReferee = false;
    let open: DecisionRequest__Output | undefined; // kept to answer again after a rejection
    let retried = false;

    stream.on('data', (response: PlayResponse__Output) => {
      heardFromReferee = true;
      const { event, events, snapshot, decisionRequest, rejection } = response;
      if (event) {
        onEvent(event);
      } else if (events) {
        events.events.forEach(onEvent);
      } else if (snapshot) {
        log(`reconnected: hand ${snapshot.view?.handIndex}, phase ${snapshot.view?.phase}`);
      } else if (decisionRequest) {
        open = decisionRequest;
        retried = false;
        stream.write({ decision: decide(decisionRequest) });
      } else if (rejection) {
        log(`answer rejected: ${rejection.code}: ${rejection.reason}`);
        if (open && rejection.requestId === open.requestId && !retried) {
          retried = true;
          stream.write({ decision: fallback(open) });
        }
      }
    });
    stream.on('error', () => { /* reported by the 'status' event below */ });
    stream.on('status', (status: grpc.StatusObject) => {
      if (status.code === grpc.status.OK) {
        stream.end();
      }
      resolve({ status, heardFromReferee });
    });
    stream.write({ join: { token: options.token, botName: options.name, protocolVersion: PROTOCOL_VERSION } });
  });
}

function explain(status: grpc.StatusObject): string {
  const hints: Partial<Record<grpc.status, string>> = {
    [grpc.status.UNAUTHENTICATED]: ' (check the token)',
    [grpc.status.FAILED_PRECONDITION]: " (the table's games are over: is this an old token?)",
  };
  return `${grpc.status[status.code]}: ${status.details}${hints[status.code] ?? ''}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Plays until the table is done (0) or a fatal error (1); reconnects on broken streams. */
async function run(client: RefereeServiceClient, options: Options): Promise<number> {
  let backoff = FIRST_BACKOFF_MS;
  let failingSince: number | undefined;
  for (;;) {
    const { status, heardFromReferee } = await playOneStream(client, options);
    if (status.code === grpc.status.OK) {
      log("the table's games are over; bye");
      return 0;
    }
    if (FATAL.has(status.code)) {
      log(`error: the referee ended the stream with ${explain(status)}`);
      return 1;
    }
    const now = Date.now();
    if (heardFromReferee || failingSince === undefined) {
      failingSince = now;
      backoff = FIRST_BACKOFF_MS;
    }
    if (now - failingSince > GIVE_UP_MS) {
      log(`error: no stream to the referee for ${GIVE_UP_MS / 1000} s, giving up (last: ${explain(status)}).`
        + ' Is the referee running at this address?');
      return 1;
    }
    log(`stream broken (${explain(status)}); reconnecting in ${backoff} ms`);
    await sleep(backoff);
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  botName = options.name;
  const definition = protoLoader.loadSync('cancellation_hearts/v1/referee_service.proto', LOADER_OPTIONS);
  const proto = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
  const client = new proto.cancellation_hearts.v1.RefereeService(
    options.server, grpc.credentials.createInsecure(),
    // Reconnect on our own schedule rather than gRPC's slower default one.
    { 'grpc.initial_reconnect_backoff_ms': FIRST_BACKOFF_MS, 'grpc.max_reconnect_backoff_ms': MAX_BACKOFF_MS },
  );
  const code = await run(client, options);
  client.close();
  process.exit(code);
}

void main();
