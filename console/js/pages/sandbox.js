// Sandbox tools (sandbox tenants only): fund an account, simulate a payment attempt on a
// collection's key or QR (with an optional forced error), authorize a card purchase, send a
// transfer to a key, and advance the tenant clock. Each tool calls the same sandbox endpoint an
// integrator would.
import { h, field, input, select, section, clear, details_list, link, id_text } from '../dom.js';
import { get, post, newIdempotencyKey } from '../api.js';
import { time } from '../components.js';
import { formatMoney, humanize } from '../format.js';
import { action_form, amount_field, read_amount, text_value, local_error, load_into, succeeded, failed } from '../ui.js';
import { href } from '../router.js';
import { transfer_state } from './transfers.js';
import { account_choice_text } from './accounts.js';

export const title = 'Sandbox tools';
export const sandbox_only = true;

const k_key_types = ['alphanumeric', 'cellphone', 'email', 'identification', 'merchant_code'];
const k_errors = [['', 'none: the payment succeeds if the rules allow it'],
  ['tx_unknown', 'tx_unknown: unexpected error'], ['tx_provider_unavailable', 'tx_provider_unavailable: network unavailable'],
  ['tx_breb_timeout', 'tx_breb_timeout: network timeout'], ['tx_risk_control', 'tx_risk_control: blocked by risk control']];
const k_clock_units = [['1', 'seconds'], ['60', 'minutes'], ['3600', 'hours'], ['86400', 'days']];

// After a tool changed balances, the choices that show them are read again (each select keeps
// its chosen value): funding an account shows in the card and transfer tools at once.
async function refresh_choices(page) {
  const [accounts, tenant_accounts, cards] = await Promise.all([
    get('/v1/accounts', { page_size: 100 }),
    get('/api/v1/tenant/accounts'),
    get('/v1/cards', { page_size: 100 }),
  ]);
  const texts = new Map();
  for (const account of tenant_accounts) texts.set(account.id, tenant_account_text(account));
  for (const account of accounts.accounts ?? []) texts.set(account.id, account_choice_text(account));
  for (const card of cards.cards ?? []) texts.set(card.id, card_text(card));
  for (const option of page.querySelectorAll('select option')) {
    if (texts.has(option.value)) option.textContent = texts.get(option.value);
  }
}

const tenant_account_text = (account) => `${account.role} ${account.number} · ${formatMoney(account.balance?.available)}`;
const card_text = (card) => `•••• ${card.last_four} ${card.nickname ?? ''} · ${formatMoney(card.balance?.available)}`;

function optgroup(label, options) {
  return h('optgroup', { label }, options.map(([value, text]) => h('option', { value }, text)));
}

function fund_tool(context, accounts, tenant_accounts) {
  const target = h('select', { name: 'account' },
    optgroup('Tenant accounts', tenant_accounts.map((account) => [account.id, tenant_account_text(account)])),
    optgroup('Ledger accounts', accounts.map((account) => [account.id, account_choice_text(account)])));
  if (context.route.query.fund) target.value = context.route.query.fund;
  const form = action_form({
    label: 'Fund an account',
    button: 'Fund account',
    fields: [field('Account', target), amount_field('fund_amount', 'Amount')],
    paths: { amount: 'fund_amount' },
    submit: (form_element) => {
      const id = form_element.elements.account.value;
      const amount = read_amount(form_element, 'fund_amount');
      const path = id.startsWith('bbtacc_') ? `/api/v1/sandbox/tenant/accounts/${encodeURIComponent(id)}/fund`
        : `/v1/sandbox/accounts/${encodeURIComponent(id)}/fund`;
      return post(path, id.startsWith('bbtacc_') ? { amount } : { amount, description: 'Funded from the console' });
    },
    done: async (account) => {
      await context.refresh_choices();
      return succeeded(`Funded ${account.name ?? account.number}. Available now `,
        h('strong', { class: 'money', id: 'funded-balance' }, formatMoney(account.balance?.available)), '.');
    },
  });
  return section('Fund an account', form);
}

function attempt_tool(context, collections) {
  const { query } = context.route;
  const payable = collections.filter((collection) => collection.key && (collection.state === 'ready' || collection.state === 'minimum_paid'));
  const chooser = select('collection', [['', 'type the key below'], ...payable.map((collection) => [collection.id,
    `${collection.nickname || collection.external_id} (${collection.key.value})`])]);
  const key_type = select('creditor_key_type', k_key_types);
  const key_value = input('creditor_key_value', { required: true });
  key_type.value = query.key_type ?? 'alphanumeric';
  key_value.value = query.key_value ?? '';
  if (query.collection) chooser.value = query.collection;
  chooser.addEventListener('change', () => {
    const chosen = payable.find((collection) => collection.id === chooser.value);
    if (!chosen) return;
    key_type.value = chosen.key.type;
    key_value.value = chosen.key.value;
  });
  const form = action_form({
    label: 'Simulate a payment attempt',
    button: 'Simulate payment',
    classes: 'wide',
    fields: [h('div', { class: 'grid' },
      field('Collection', chooser, 'Fills in its key.'),
      field('Key type', key_type),
      field('Key', key_value),
      amount_field('attempt_amount', 'Amount', { value: query.amount ?? '' }),
      field('QR payment id (optional)', input('payment_id', { value: query.payment_id ?? '', maxlength: '36' }),
        'Pays that QR code of the collection.'),
      field('Forced error (optional)', select('error', k_errors)))],
    paths: { amount: 'attempt_amount' },
    submit: (form_element) => {
      const body = {
        amount: read_amount(form_element, 'attempt_amount'),
        creditor_key_type: key_type.value,
        creditor_key_value: key_value.value.trim(),
      };
      if (!body.creditor_key_value) throw local_error('creditor_key_value', 'enter the collection key');
      const payment_id = text_value(form_element, 'payment_id');
      if (payment_id) body.payment_id = payment_id;
      if (form_element.elements.error.value) body.error = form_element.elements.error.value;
      return post('/api/v1/sandbox/collections/attempts', body);
    },
    done: async (attempt) => {
      const links = [link(`#/collections/${encodeURIComponent(attempt.collection_id)}`, 'See the collection'), ' · ',
        link('#/tenant-accounts', 'See the balances')];
      const state = h('strong', { id: 'attempt-state' }, attempt.attempt_state);
      if (attempt.attempt_state === 'rejected' || attempt.attempt_state === 'unsuccessful') {
        return failed(h('p', {}, 'Attempt ', id_text(attempt.attempt_id), ': ', state,
          attempt.attempt_state_reason ? ` (${humanize(attempt.attempt_state_reason)})` : '', '. ',
          await what_to_change(attempt, collections), ' ', links));
      }
      await context.refresh_choices();
      return succeeded(h('p', {}, 'Attempt ', id_text(attempt.attempt_id), ': ', state,
        attempt.attempt_state === 'pending' ? ' (it fails with the forced error in a moment)' : '', '. ', links));
    },
  });
  return section('Simulate a payment attempt', form);
}

// What a payer would change after a rejected attempt: the amounts the collection takes.
async function what_to_change(attempt, collections) {
  const reason = attempt.attempt_state_reason ?? '';
  if (reason === 'amount_mismatch') return 'Pay exactly the amount of the QR code.';
  if (!/amount/.test(reason)) return 'Change the amount, the key or the forced error and try again.';
  const collection = collections.find((item) => item.id === attempt.collection_id) ??
    await get(`/api/v1/collections/${encodeURIComponent(attempt.collection_id)}`);
  const room = collection.remaining_amount ? ` (${formatMoney(collection.remaining_amount)} left to collect)` : '';
  return `This collection takes payments from ${formatMoney(collection.minimum_attempt_amount)} to ${formatMoney(collection.maximum_attempt_amount)}${room}: pay an amount in that range.`;
}

function authorize_tool(context, cards) {
  const card = select('card', cards.map((item) => [item.id, card_text(item)]));
  if (context.route.query.card) card.value = context.route.query.card;
  const form = action_form({
    label: 'Authorize a card purchase',
    button: 'Authorize',
    classes: 'wide',
    fields: [h('div', { class: 'grid' },
      field('Card', card),
      amount_field('authorization_amount', 'Amount'),
      field('Merchant', input('merchant_name', { value: 'Tienda de prueba', required: true })),
      field('MCC', input('mcc', { value: '5411', inputmode: 'numeric', maxlength: '4' }), 'Merchant category code, 4 digits.'),
      field('Merchant id', input('mid', { value: 'CONSOLE001', maxlength: '15' })),
      field('Country', input('country', { value: 'CO', maxlength: '2' })),
      field('Channel', select('channel', [['online_purchase', 'online purchase'], ['physical_purchase', 'physical purchase'], ['atm_withdrawal', 'ATM withdrawal']])))],
    paths: { amount: 'authorization_amount', 'merchant.name': 'merchant_name' },
    submit: (form_element) => {
      if (!card.value) throw local_error('card', 'issue a card first (Money, Cards)');
      return post(`/v1/sandbox/cards/${encodeURIComponent(card.value)}/authorizations`, {
        amount: read_amount(form_element, 'authorization_amount'),
        merchant: {
          name: text_value(form_element, 'merchant_name') ?? '', mcc: text_value(form_element, 'mcc') ?? '',
          mid: text_value(form_element, 'mid') ?? '', country: text_value(form_element, 'country') ?? '',
        },
        channel: form_element.elements.channel.value,
      });
    },
    done: async (transaction) => {
      const see = link(`#/cards/${encodeURIComponent(transaction.card_id)}`, 'See the card');
      await context.refresh_choices();
      if (transaction.decline_reason) {
        return failed(h('p', {}, h('strong', {}, humanize(transaction.type)), ' for ', formatMoney(transaction.amount),
          `: ${humanize(transaction.decline_reason)} (ISO 8583 ${transaction.iso8583_code}). `,
          transaction.decline_reason === 'insufficient_funds' ? 'Fund the card or authorize less. ' : '', see));
      }
      return succeeded(h('p', {}, h('strong', {}, humanize(transaction.type)), ' for ', formatMoney(transaction.amount), '. ', see));
    },
  });
  return section('Authorize a card purchase', form);
}

function transfer_tool(context, originators) {
  const form = action_form({
    label: 'Send a transfer to a key',
    button: 'Send transfer',
    classes: 'wide',
    fields: [h('div', { class: 'grid' },
      field('From', select('tenant_account_id', originators.map((account) => [account.id, tenant_account_text(account)]))),
      field('To key', input('key', { required: true, placeholder: '3001234567 or @SHOP' }),
        'A cellphone, email, @alphanumeric, identification or merchant code key.'),
      amount_field('transfer_amount', 'Amount'),
      field('Description (optional)', input('description', { maxlength: '500' }),
        'In the sandbox, tx_unknown, tx_risk_control, tx_breb_timeout or tx_provider_unavailable here makes it fail.'))],
    submit: async (form_element) => {
      const transfer = {
        external_id: `console-${newIdempotencyKey()}`,
        amount: read_amount(form_element, 'transfer_amount'),
        query: { format: 'plain_key', value: text_value(form_element, 'key') ?? '' },
      };
      const description = text_value(form_element, 'description');
      if (description) transfer.description = description;
      const batch = await post('/api/v1/outgoing_transfers', {
        tenant_account_id: form_element.elements.tenant_account_id.value, transfers: [transfer],
      });
      const rejected = batch.rejected_transfers?.[0];
      if (rejected) {
        const path = { 'transfers.0.query.value': 'key', 'transfers.0.amount.amount': 'transfer_amount' }[rejected.path] ?? rejected.path;
        throw local_error(path, rejected.message, rejected.error_code);
      }
      return batch;
    },
    done: async (batch) => {
      const transfer = batch.accepted_transfers?.[0] ?? batch.duplicated_transfers?.[0];
      await context.refresh_choices();
      return succeeded(h('p', {}, 'Batch ', id_text(batch.id), ': transfer of ', formatMoney(transfer?.amount), ' ',
        transfer ? transfer_state(transfer) : '', '. ',
        link(href('/transfers', { batch_id: batch.id }), 'Follow it')));
    },
  });
  return section('Send a transfer to a key', form);
}

async function clock_tool(context) {
  const now = h('span', { id: 'clock-now' });
  await load_into(now, async () => time((await get('/api/v1/sandbox/clock')).now));
  const form = action_form({
    label: 'Advance the tenant clock',
    button: 'Advance clock',
    fields: [h('div', { class: 'grid' },
      field('By', input('clock_amount', { type: 'number', min: '1', value: '1', inputmode: 'numeric', required: true })),
      field('Unit', select('clock_unit', k_clock_units)))],
    submit: (form_element) => {
      const count = Number.parseInt(form_element.elements.clock_amount.value, 10);
      if (!Number.isInteger(count) || count < 1) throw local_error('clock_amount', 'enter a whole number above zero');
      const seconds = count * Number(form_element.elements.clock_unit.value);
      return post('/api/v1/sandbox/clock/advance', { seconds });
    },
    done: (clock) => {
      clear(now).append(time(clock.now));
      return succeeded('The tenant clock is now ', time(clock.now), '. Expiries and transfers due by then happen now.');
    },
  });
  return section('Advance the tenant clock', details_list([['Tenant clock now', now]]),
    h('p', { class: 'hint' }, 'The clock only moves forward, at most a year per step; other tenants are not affected.'),
    form);
}

export async function render(context) {
  const [accounts, tenant_accounts, collections, cards] = await Promise.all([
    get('/v1/accounts', { page_size: 100 }),
    get('/api/v1/tenant/accounts'),
    get('/api/v1/collections', { page_size: 100 }),
    get('/v1/cards', { page_size: 100 }),
  ]);
  const originators = tenant_accounts.filter((account) => account.role === 'originator' && account.state === 'active');
  const page = h('div', {});
  const tools = { ...context, refresh_choices: () => refresh_choices(page) };
  page.append(
    h('h1', {}, 'Sandbox tools'),
    h('p', {}, 'Drive the simulated network without writing code. These tools exist only in the sandbox.'),
    h('div', { class: 'tools' },
      fund_tool(tools, accounts.accounts ?? [], tenant_accounts),
      attempt_tool(tools, collections.collections ?? []),
      authorize_tool(tools, cards.cards ?? []),
      transfer_tool(tools, originators),
      await clock_tool(tools)));
  return page;
}
