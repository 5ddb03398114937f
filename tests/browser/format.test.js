// Unit tests of the console's formatting module (console/js/format.js), run by node's test
// runner: money is shown as `COP 15.000,00` and typed in pesos, never as raw minor units.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  formatMinor, formatMoney, formatAmountInput, parsePesos, minorToJson, formatTimestamp, humanize,
  formatDuration, sentence,
} from '../../console/js/format.js';
import { shortened_id } from '../../console/js/dom.js';

test('minor units are shown as pesos with two decimals, dots grouping thousands', () => {
  assert.equal(formatMinor(1500000, 'COP'), 'COP 15.000,00');
  assert.equal(formatMinor(0, 'COP'), 'COP 0,00');
  assert.equal(formatMinor(5, 'COP'), 'COP 0,05');
  assert.equal(formatMinor(99, 'COP'), 'COP 0,99');
  assert.equal(formatMinor(100, 'COP'), 'COP 1,00');
  assert.equal(formatMinor(123456, 'COP'), 'COP 1.234,56');
  assert.equal(formatMinor(100000000, 'COP'), 'COP 1.000.000,00');
  assert.equal(formatMinor(-250075, 'COP'), 'COP -2.500,75');
  assert.equal(formatMinor(1234, 'USD'), 'USD 12,34');
});

test('the largest amount the API allows is shown exactly (BigInt, never a float)', () => {
  assert.equal(formatMinor(9007199254740991n, 'COP'), 'COP 90.071.992.547.409,91');
  assert.equal(formatMinor('9007199254740991', 'COP'), 'COP 90.071.992.547.409,91');
  // Larger integers (never answered) still show exactly.
  assert.equal(formatMinor(9223372036854775807n, 'COP'), 'COP 92.233.720.368.547.758,07');
});

test('a Money object is formatted, null shows as a dash, a non-integer is refused', () => {
  assert.equal(formatMoney({ amount: 1500000, currency: 'COP' }), 'COP 15.000,00');
  assert.equal(formatMoney(null), '—');
  assert.equal(formatMoney(undefined), '—');
  assert.throws(() => formatMinor(1.5, 'COP'), TypeError);
  assert.throws(() => formatMinor('12a', 'COP'), TypeError);
});

test('an amount field starts with pesos that read back to the same minor units', () => {
  assert.equal(formatAmountInput(1500000), '15.000,00');
  assert.deepEqual(parsePesos(formatAmountInput(123456789)), { minor: 123456789n });
});

test('typed pesos become minor units', () => {
  assert.deepEqual(parsePesos('15000'), { minor: 1500000n });
  assert.deepEqual(parsePesos('15.000'), { minor: 1500000n });
  assert.deepEqual(parsePesos('15.000,5'), { minor: 1500050n });
  assert.deepEqual(parsePesos('15.000,50'), { minor: 1500050n });
  assert.deepEqual(parsePesos(' 1.234.567,89 '), { minor: 123456789n });
  assert.deepEqual(parsePesos('COP 2.500,00'), { minor: 250000n });
  assert.deepEqual(parsePesos('0,01'), { minor: 1n });
});

test('ambiguous or wrong amounts are refused with a reason, never guessed', () => {
  assert.match(parsePesos('15000.50').error, /','/);
  assert.ok(parsePesos('').error);
  assert.ok(parsePesos('abc').error);
  assert.ok(parsePesos('1,234').error, 'three decimals');
  assert.ok(parsePesos('15.00').error, 'a dot that does not group thousands');
  assert.ok(parsePesos('-5').error);
  assert.equal(parsePesos('0').error, 'must be more than zero');
  assert.equal(parsePesos('99999999999999999999').error, 'is too large');
  // The API takes at most 2^53 - 1 minor units.
  assert.equal(parsePesos('90.071.992.547.409,91').minor, 9007199254740991n);
  assert.equal(parsePesos('90.071.992.547.409,92').error, 'is too large');
});

test('amounts go to JSON as exact numbers only', () => {
  assert.equal(minorToJson(1500000n), 1500000);
  assert.throws(() => minorToJson(2n ** 60n), RangeError);
});

test('timestamps and codes read as words', () => {
  assert.equal(formatTimestamp('2025-01-31T12:00:00.000000Z'), '2025-01-31 12:00:00 UTC');
  assert.equal(formatTimestamp('2026-11-25T13:08:55.111275'), '2026-11-25 13:08:55');
  assert.equal(formatTimestamp(null), '—');
  assert.equal(formatTimestamp('not a time'), 'not a time');
  assert.equal(humanize('sent_to_breb_provider'), 'sent to breb provider');
  assert.equal(humanize(null), '—');
});

test('durations read largest unit first, zero units left out', () => {
  assert.equal(formatDuration(172820), '2 days 20 s');
  assert.equal(formatDuration(0), '0 s');
  assert.equal(formatDuration(1), '1 s');
  assert.equal(formatDuration(86400), '1 day');
  assert.equal(formatDuration(3600 + 120 + 5), '1 h 2 min 5 s');
  assert.equal(formatDuration(-5), '0 s');
});

test('ids are shortened in the middle: prefix, ellipsis, last eight characters', () => {
  assert.equal(shortened_id('bbtacc_5V1Z7sRbo8AMlfKABGDr8H'), 'bbtacc_…KABGDr8H');
  assert.equal(shortened_id('evt_5V1Z7sRbo8AMlfKABGDr8H'), 'evt_…KABGDr8H');
  assert.equal(shortened_id('cli_short'), 'cli_short');
  assert.equal(shortened_id('abcdefghijklmnopqrstu'), 'abcd…nopqrstu', 'no prefix: its first four');
  assert.equal(shortened_id(''), '');
});

test('a heading made of codes starts with a capital', () => {
  assert.equal(sentence('authorization declined at Tienda'), 'Authorization declined at Tienda');
  assert.equal(sentence(''), '');
});

