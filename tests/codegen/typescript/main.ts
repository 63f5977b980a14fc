// A minimal bot on the code docs/PROTOCOL.md's TypeScript recipe generates: it passes its first
// three cards and plays the first legal card. HEARTS_SERVER is host:port, HEARTS_TOKEN_FILE the token.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/referee_service';
import type { Decision } from './generated/cancellation_hearts/v1/Decision';
import type { PlayResponse__Output } from './generated/cancellation_hearts/v1/PlayResponse';

const PROTO_DIR = path.join(__dirname, '..', 'proto');
const definition = protoLoader.loadSync('cancellation_hearts/v1/referee_service.proto', { longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [PROTO_DIR] });
const proto = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
const client = new proto.cancellation_hearts.v1.RefereeService(
  process.env.HEARTS_SERVER ?? '', grpc.credentials.createInsecure());
const token = fs.readFileSync(process.env.HEARTS_TOKEN_FILE ?? '', 'utf8').trim();
const stream = client.Play();
stream.write({ join: { token, botName: 'recipe-typescript', protocolVersion: 1 } });
stream.on('data', (response: PlayResponse__Output) => {
  const request = response.decisionRequest;
  if (!request) return;
  const decision: Decision = { requestId: request.requestId };
  if (request.kind === 'DECISION_KIND_PASS') decision.passCards = { cards: request.view!.hand.slice(0, 3) };
  else if (request.kind === 'DECISION_KIND_PLAY') decision.playCard = { card: request.legalCards[0] };
  else decision.chooseMoon = { choice: 'MOON_CHOICE_SELF_MINUS_26' };
  stream.write({ decision });
});
stream.on('end', () => client.close());
stream.on('error', (error) => {
  console.error(error.message);
  process.exit(1);
});
