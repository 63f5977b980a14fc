import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { choosePass, choosePlay } from './strategy';

test('leads the lowest card', () => {
  assert.equal(choosePlay(['5C', '3D', 'TS'], []), '3D');
});

test('follows with the highest card that does not win', () => {
  assert.equal(choosePlay(['2C', 'JC', 'AC'], ['QC', '4C']), 'JC');
});

test('a card that cancels the winner does not win', () => {
  // Our KC cancels the other KC, so 9C wins: KC is the highest card that does not win.
  assert.equal(choosePlay(['2C', 'KC', 'AC'], ['9C', 'KC']), 'KC');
});

test('plays the lowest when every card wins', () => {
  assert.equal(choosePlay(['9H', 'KH'], ['2H', '5H']), '9H');
});

test('cancelled cards do not count as winners', () => {
  // Both aces cancel; 3S is winning, so only 2S ducks under it.
  assert.equal(choosePlay(['2S', '4S'], ['AS', 'AS', '3S']), '2S');
});

test('dumps the Black Maria, then the highest heart, then the highest card when void', () => {
  assert.equal(choosePlay(['2C', 'AH', 'QS'], ['5D']), 'QS');
  assert.equal(choosePlay(['2C', 'JH', '3H', 'AC'], ['5D']), 'JH');
  assert.equal(choosePlay(['2C', 'AC', 'KS'], ['5D']), 'AC');
});

test('passes the most dangerous cards', () => {
  assert.deepEqual(choosePass(['AC', 'KH', 'AS', 'QS', 'QS', '2S']), ['QS', 'QS', 'AS']);
  assert.deepEqual(choosePass(['AC', '2H', 'TH', 'AH', 'KS', '3D']), ['KS', 'AH', 'TH']);
  assert.deepEqual(choosePass(['AC', 'KD', '9H', '2S', '3H']), ['AC', 'KD', '9H']);
});
