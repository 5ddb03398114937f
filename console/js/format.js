// How the console shows and reads money and times. The API's amounts are integers of minor
// units (COP has 2 decimals); people read and type pesos: `COP 15.000,00` ('.' groups
// thousands, ',' marks the decimals, as in Colombia). Amounts are kept as BigInt here so that
// no value is ever rounded through a float. No DOM in this module: node's test runner runs it
// (tests/browser/format.test.js).

const k_minor_digits = 2;
const k_minor_per_unit = 100n;
// The largest amount the API takes or answers: 2^53 - 1 minor units (about COP 90 trillion).
const k_amount_max_minor = 9007199254740991n;

function to_bigint(amount) {
  if (typeof amount === 'bigint') return amount;
  if (typeof amount === 'number' && Number.isInteger(amount)) return BigInt(amount);
  if (typeof amount === 'string' && /^-?[0-9]+$/.test(amount)) return BigInt(amount);
  throw new TypeError(`not an integer amount of minor units: ${String(amount)}`);
}

// 1234567 -> "1.234.567"
function group_thousands(digits) {
  let out = '';
  for (let index = 0; index < digits.length; index += 1) {
    const left = digits.length - index;
    out += digits[index];
    if (left > 1 && (left - 1) % 3 === 0) out += '.';
  }
  return out;
}

// formatMinor(1500000, 'COP') -> "COP 15.000,00"; negative amounts keep their sign after the code.
export function formatMinor(amount, currency = 'COP') {
  const minor = to_bigint(amount);
  const negative = minor < 0n;
  const magnitude = negative ? -minor : minor;
  const whole = (magnitude / k_minor_per_unit).toString();
  const fraction = (magnitude % k_minor_per_unit).toString().padStart(k_minor_digits, '0');
  return `${currency} ${negative ? '-' : ''}${group_thousands(whole)},${fraction}`;
}

// The text an amount field starts with: 1500000 -> "15.000,00" (what parsePesos reads back).
export function formatAmountInput(amount) {
  return formatMinor(amount, '').trimStart();
}

// A Money object of the API ({amount, currency}); null or absent shows as an em dash.
export function formatMoney(money) {
  if (money === null || money === undefined) return '—';
  return formatMinor(money.amount, money.currency);
}

// What a person types into an amount field, in pesos: "15000", "15.000", "15.000,5",
// "15000,50". Answers {minor: BigInt} or {error: "why"}; never guesses: a '.' must group
// thousands exactly (so "15000.50" is refused with a hint instead of being read as 1.500.050).
export function parsePesos(text) {
  const value = String(text ?? '').trim().replace(/^COP\s*/i, '');
  if (value === '') return { error: 'enter an amount' };
  const match = /^([0-9]{1,3}(?:\.[0-9]{3})+|[0-9]+)(?:,([0-9]{1,2}))?$/.exec(value);
  if (!match) {
    if (/^[0-9]+\.[0-9]{1,2}$/.test(value)) {
      return { error: "use ',' for decimals and '.' for thousands (15.000,50)" };
    }
    return { error: "use digits, with ',' before the cents (15.000,50)" };
  }
  const whole = BigInt(match[1].replaceAll('.', ''));
  const cents = BigInt((match[2] ?? '').padEnd(k_minor_digits, '0'));
  const minor = whole * k_minor_per_unit + cents;
  if (minor <= 0n) return { error: 'must be more than zero' };
  if (minor > k_amount_max_minor) return { error: 'is too large' };
  return { minor };
}

// The JSON number of a parsed amount: exact up to 2^53 minor units (about COP 90 trillion, far
// beyond any real amount); above that JSON.stringify would send a rounded number, so it throws.
export function minorToJson(minor) {
  if (minor > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('amount too large to send');
  return Number(minor);
}

// "2025-01-31T12:00:00.000000Z" -> "2025-01-31 12:00:00 UTC"; timemarks (no zone) keep none.
export function formatTimestamp(text) {
  if (text === null || text === undefined || text === '') return '—';
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?(Z)?$/.exec(text);
  if (!match) return String(text);
  return `${match[1]} ${match[2]}${match[4] ? ' UTC' : ''}`;
}

// "sent_to_breb_provider" -> "sent to breb provider": states and codes read as words.
export function humanize(code) {
  if (code === null || code === undefined || code === '') return '—';
  return String(code).replaceAll('_', ' ');
}

// 172820 -> "2 days 20 s": a count of seconds as people read it, largest unit first, units
// that are zero left out ("0 s" for none).
export function formatDuration(seconds) {
  let left = Math.max(0, Math.trunc(Number(seconds) || 0));
  const parts = [];
  for (const [size, one, many] of [[86400, 'day', 'days'], [3600, 'h', 'h'], [60, 'min', 'min'], [1, 's', 's']]) {
    const count = Math.floor(left / size);
    left -= count * size;
    if (count > 0) parts.push(`${count} ${count === 1 ? one : many}`);
  }
  return parts.length ? parts.join(' ') : '0 s';
}

// "authorization declined at X" -> "Authorization declined at X": a heading made of codes.
export function sentence(text) {
  const value = String(text ?? '');
  return value.charAt(0).toUpperCase() + value.slice(1);
}
