// The console in a real browser (Debian's chromium driven by playwright-core) against a real
// tesoro server: what issue 12 asks a tenant's people to do without the command line. The
// tests run in order and share one server; later tests use what earlier ones created.
// Screenshots of every page go to build/test-output/console/<engine>/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';

import {
  Server, open_browser, screenshot, visit, settle, unlabelled_controls, console_api, engine,
  overflow_problems, accessibility_problems, keyboard_unreachable,
} from './harness.js';
import { parsePesos, formatMinor } from '../../console/js/format.js';

const server = new Server();
const state = {};
let owner; // the first tenant's owner, in a browser of their own
let other; // the second tenant's owner
let receiver; // a webhook receiver on 127.0.0.1 (loopback URLs are allowed in the sandbox)
const received = [];

// Each page, at the width of its window and again at a phone's 390 px: a screenshot, every
// control labelled, nothing wider than the window (wide tables scroll inside their card),
// and no serious or critical accessibility violation (axe-core).
async function check(page, name) {
  const viewport = page.viewportSize();
  const widths = viewport.width === 390 ? [390] : [viewport.width, 390];
  for (const width of widths) {
    if (width !== page.viewportSize().width) await page.setViewportSize({ width, height: viewport.height });
    const label = width === viewport.width ? name : `${name}-${width}`;
    await screenshot(page, label);
    assert.deepEqual(await unlabelled_controls(page), [], `unlabelled controls on ${label}`);
    assert.deepEqual(await overflow_problems(page), [], `what does not fit on ${label}`);
    assert.deepEqual(await accessibility_problems(page), [], `accessibility of ${label}`);
  }
  if (page.viewportSize().width !== viewport.width) await page.setViewportSize(viewport);
}

async function sign_in(page, email, password) {
  await page.goto(`${server.base_url}/console/`);
  await settle(page, 'Sign in');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', password);
  await page.click('form button[type=submit]');
  await settle(page, 'Overview');
}

async function available_of(page, number) {
  await visit(page, server.base_url, '/tenant-accounts', 'Tenant accounts');
  const text = await page.locator('tr', { hasText: number }).locator('td[data-label="Available"]').innerText();
  const parsed = parsePesos(text.trim());
  if (parsed.error === 'must be more than zero') return 0n; // "COP 0,00"
  assert.ok(!parsed.error, `"${text}" is an amount in pesos`);
  return parsed.minor;
}

async function poll(what, condition, timeout_ms = 10000) {
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

before(async () => {
  receiver = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      received.push({ headers: request.headers, body: JSON.parse(body || 'null') });
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.end('ok');
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  await server.start();
  owner = await open_browser();
});

after(async () => {
  // Closing a browser checks every answer it received against openapi/tesoro.yaml: a violation
  // fails the run, after everything is stopped.
  const closed = await Promise.allSettled([owner?.close(), other?.close()]);
  await server.stop();
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve()));
  for (const result of closed) if (result.status === 'rejected') throw result.reason;
});

test(`signs in with the owner password init printed, by keyboard (${engine})`, async () => {
  const { page } = owner;
  assert.match(server.first.console_url, /^http:\/\/127\.0\.0\.1:\d+\/console/);
  assert.ok(server.first.owner_email && server.first.owner_password, 'init prints the owner once');
  await page.goto(server.first.console_url);
  await settle(page, 'Sign in');
  await check(page, 'signin');
  // Signed out, the form is not squeezed into the navigation's column.
  assert.ok((await page.locator('form[aria-label="Sign in"]').boundingBox()).width >= 320, 'the sign-in form is 320 px wide or more');

  // A wrong password: the API's 401 is shown, and nobody is signed in.
  await page.fill('input[name=email]', server.first.owner_email);
  await page.fill('input[name=password]', 'not the password');
  await page.press('input[name=password]', 'Enter');
  await page.locator('tesoro-error .error').waitFor();
  assert.match(await page.locator('tesoro-error').innerText(), /401/);

  // The keyboard alone: the skip link comes first, then the form.
  await page.reload();
  await settle(page, 'Sign in');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'skip-link');
  await poll('the email field to take focus', async () => {
    await page.keyboard.press('Tab');
    return page.evaluate(() => document.activeElement.name === 'email');
  });
  await page.keyboard.type(server.first.owner_email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(server.first.owner_password);
  await page.keyboard.press('Enter');
  await settle(page, 'Overview');
  const focus_ring = await page.evaluate(() => {
    const link = document.querySelector('nav a[data-path="/keys"]');
    link.focus();
    return getComputedStyle(link).outlineStyle;
  });
  assert.notEqual(focus_ring, 'none', 'a focused link shows a focus ring');
  assert.match(await page.locator('main').innerText(), new RegExp(server.first.tenant_id));
  await check(page, 'overview');
});

test('creates an API key, uses it (201), sees it by prefix only, revokes it (401)', async () => {
  const { page } = owner;
  await visit(page, server.base_url, '/keys', 'API keys');
  await page.selectOption('select[name="scope-ledger"]', 'write');
  await page.click('button:has-text("Create API key")');
  const secret_box = page.locator('tesoro-secret input');
  await secret_box.waitFor();
  const api_key = await secret_box.inputValue();
  assert.match(api_key, /^sk_sandbox_/);
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains('secret-value')), true,
    'focus moves to the secret');
  await check(page, 'keys-created');

  const created = await fetch(`${server.base_url}/v1/ledger/accounts`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${api_key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Opened with a console key', type: 'savings_account', currency: 'COP' }),
  });
  assert.equal(created.status, 201);

  await page.reload();
  await settle(page, 'API keys');
  const listed = (await console_api(page, 'GET', '/keys')).body.data;
  const key = listed.find((item) => api_key.startsWith(item.key_prefix) && !item.revoked_at && item.scopes.includes('ledger:write'));
  assert.ok(key, 'the new key is listed');
  assert.ok(key.key_prefix.length < api_key.length);
  assert.ok(!(await page.content()).includes(api_key), 'the secret is not shown again');
  const row = page.locator('tr', { hasText: key.key_prefix });
  await row.waitFor();
  state.key_id = key.id;
  state.key_prefix = key.key_prefix;

  await row.locator('button', { hasText: 'Revoke' }).click();
  await page.locator('tr', { hasText: key.key_prefix }).locator('.badge', { hasText: 'revoked' }).waitFor();
  const refused = await fetch(`${server.base_url}/v1/accounts`, { headers: { Authorization: `Bearer ${api_key}` } });
  assert.equal(refused.status, 401);
  await check(page, 'keys');
});

test('creates an OAuth client (its secret shown once) and revokes it', async () => {
  const { page } = owner;
  await visit(page, server.base_url, '/clients', 'OAuth clients');
  await page.check('input[name=scope][value="collections"]');
  await page.click('button:has-text("Create OAuth client")');
  const secret_box = page.locator('tesoro-secret input');
  await secret_box.waitFor();
  const client_secret = await secret_box.inputValue();
  const client_id = await page.locator('.created code').first().innerText();
  const token = (credentials) => fetch(`${server.base_url}/api/v1/oauth/token`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', ...credentials }),
  });
  assert.equal((await token({ client_id, client_secret })).status, 200);
  await check(page, 'clients-created');
  await page.locator('tr', { hasText: client_id }).locator('button', { hasText: 'Revoke' }).click();
  await page.locator('tr', { hasText: client_id }).locator('.badge', { hasText: 'revoked' }).waitFor();
  assert.equal((await token({ client_id, client_secret })).status, 401);
  await check(page, 'clients');
});

test('registers a webhook endpoint, its secret shown once', async () => {
  const { page } = owner;
  await visit(page, server.base_url, '/webhooks', 'Webhook endpoints');
  const url = `http://127.0.0.1:${receiver.address().port}/tesoro`;
  await page.fill('input[name=url]', url);
  await page.fill('input[name=description]', 'browser test receiver');
  await page.fill('input[name=event_types]', 'collection.*, account.credited');
  await page.click('button:has-text("Register endpoint")');
  const secret_box = page.locator('tesoro-secret input');
  await secret_box.waitFor();
  assert.match(await secret_box.inputValue(), /^whsec_/);
  await page.locator('#webhook-list a', { hasText: url }).waitFor();
  await check(page, 'webhooks');
  const endpoints = (await console_api(page, 'GET', '/v1/webhook_endpoints')).body.webhook_endpoints;
  state.endpoint_id = endpoints.find((endpoint) => endpoint.url === url).id;
});

test('creates a collection and a QR code, whose image is shown and downloads', async () => {
  const { page } = owner;
  await visit(page, server.base_url, '/collections', 'Collections');
  await check(page, 'collections');
  await page.fill('input[name=nickname]', 'Browser shop');
  await page.click('button:has-text("Create collection")');
  await settle(page, 'Collection Browser shop');
  state.collection_id = decodeURIComponent(page.url().split('#/collections/')[1]);
  assert.match(state.collection_id, /^bbcol_/);

  await page.fill('input[name=amount]', '50.000,00');
  await page.click('button:has-text("Create QR code")');
  const image = page.locator('img.qr-image');
  await image.waitFor();
  const size = await image.evaluate((element) => (element.complete ? element.naturalWidth : 0));
  assert.equal(size, 400, 'the PNG loads, 400 pixels wide');
  assert.match(await page.locator('#qr-result').innerText(), /COP 50\.000,00/);

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[download]')]);
  const png = fs.readFileSync(await download.path());
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  assert.match(download.suggestedFilename(), /^bbqr_.*\.png$/);
  state.simulate_href = await page.locator('a', { hasText: 'Simulate a payment on this QR' }).getAttribute('href');
  // The collection's list of codes shows the new one at once, and keeps every earlier one.
  const qr_rows = page.locator('#qr-list tbody tr');
  assert.equal(await qr_rows.count(), 1);
  await page.fill('input[name=amount]', '');
  await page.click('button:has-text("Create QR code")');
  await poll('the second code in the list', async () => (await qr_rows.count()) === 2);
  assert.match(await qr_rows.nth(0).locator('td[data-label="Amount"]').innerText(), /typed by the payer/);
  assert.match(await qr_rows.nth(1).locator('td[data-label="Amount"]').innerText(), /COP 50\.000,00/);
  await check(page, 'collection-qr');
});

test('simulates a payment attempt on the QR and sees the balance change', async () => {
  const { page } = owner;
  const receptor = (await console_api(page, 'GET', '/api/v1/tenant/accounts')).body
    .find((account) => account.id === server.first.tenant_account_ids[0]);
  assert.equal(receptor.role, 'receptor');
  const before_minor = await available_of(page, receptor.number);

  await page.goto(`${server.base_url}/console/${state.simulate_href}`);
  await settle(page, 'Sandbox tools');
  assert.equal(await page.inputValue('input[name=attempt_amount]'), '50.000,00');
  assert.match(await page.inputValue('input[name=payment_id]'), /\S/);
  await page.click('button:has-text("Simulate payment")');
  await page.locator('#attempt-state', { hasText: 'successful' }).waitFor();
  await check(page, 'sandbox-attempt');

  const after_minor = await available_of(page, receptor.number);
  assert.equal(after_minor - before_minor, 5000000n, 'COP 50.000,00 more');
  const cell = await page.locator('tr', { hasText: receptor.number }).locator('td[data-label="Available"]').innerText();
  assert.equal(cell.trim(), formatMinor(after_minor, 'COP'));
  await check(page, 'tenant-accounts');

  // An amount outside the collection's bounds is rejected: a failure, in red, that says the
  // range it takes.
  await visit(page, server.base_url, `/sandbox?collection=${state.collection_id}`, 'Sandbox tools');
  await page.selectOption('select[name=collection]', state.collection_id);
  const tool = page.locator('form[aria-label="Simulate a payment attempt"]');
  await page.fill('input[name=attempt_amount]', '2.000.000');
  await page.fill('input[name=payment_id]', '');
  await page.click('button:has-text("Simulate payment")');
  await tool.locator('.error #attempt-state', { hasText: 'rejected' }).waitFor();
  assert.match(await tool.locator('.error').innerText(),
    /amount out of range.*payments from COP 1\.000,00 to COP 1\.000\.000,00/s);
  assert.equal(await tool.locator('.success').count(), 0);
  await check(page, 'sandbox-attempt-rejected');

  // A forced error: the attempt is recorded, then fails with that reason.
  await page.fill('input[name=attempt_amount]', '1.000');
  await page.selectOption('select[name=error]', 'tx_risk_control');
  await page.click('button:has-text("Simulate payment")');
  await page.locator('#attempt-state', { hasText: 'pending' }).waitFor();
  await poll('the forced error to fail the attempt', async () => {
    await visit(page, server.base_url, `/collections/${state.collection_id}`, 'Collection');
    return (await page.locator('#attempt-list').innerText()).includes('tx risk control');
  });
  assert.match(await page.locator('#attempt-list').innerText(), /successful/);
  await check(page, 'collection-attempts');
});

test('a single-use collection offers only a dynamic code, and once paid has nothing left to pay', async () => {
  const { page } = owner;
  const item = {
    external_id: `single-${Date.now()}`, tenant_account_id: server.first.tenant_account_ids[0], usage_mode: 'single_use',
    minimum_attempt_amount: { amount: 200000, currency: 'COP' }, maximum_attempt_amount: { amount: 200000, currency: 'COP' },
    total_minimum_amount: { amount: 200000, currency: 'COP' }, total_maximum_amount: { amount: 200000, currency: 'COP' },
  };
  const collection = (await console_api(page, 'POST', '/api/v1/collections', { body: { collections: [item] } })).body.created[0];
  await visit(page, server.base_url, `/collections/${collection.id}`, 'Collection');
  assert.deepEqual(await page.locator('select[name=usage_mode] option').evaluateAll((options) => options.map((option) => option.value)),
    ['single_use'], 'no static code for a single-use collection');
  const paid = await console_api(page, 'POST', '/api/v1/sandbox/collections/attempts', {
    body: { amount: { amount: 200000, currency: 'COP' }, creditor_key_type: collection.key.type, creditor_key_value: collection.key.value },
  });
  assert.equal(paid.body.attempt_state, 'successful');
  const after = (await console_api(page, 'GET', `/api/v1/collections/${collection.id}`)).body;
  assert.equal(after.state, 'paid', JSON.stringify(after));
  const remaining = page.locator('dt', { hasText: 'Remaining' }).locator('xpath=following-sibling::dd[1]');
  await page.reload();  // the same route: drawn again from the server
  await settle(page, 'Collection');
  assert.equal((await remaining.innerText()).trim(), 'nothing: the collection is paid');
  assert.equal(await page.locator('form[aria-label="Create a QR code"]').count(), 0);
  await check(page, 'collection-paid');
});

test('shows the webhook deliveries with their status, and replays one', async () => {
  const { page } = owner;
  await poll('a delivery to the receiver', () => received.length > 0);
  await visit(page, server.base_url, `/webhooks/${state.endpoint_id}`, 'Webhook endpoint');
  await poll('the delivery log', async () => {
    await page.reload();  // the same route: drawn again from the server
    await settle(page, 'Webhook endpoint');
    return (await page.locator('#delivery-list').innerText()).includes('200 delivered');
  });
  const count = received.length;
  await page.locator('#delivery-list button', { hasText: 'Replay' }).first().click();
  await poll('the replayed delivery', () => received.length > count);
  await page.click('button:has-text("Refresh deliveries")');
  await page.locator('#delivery-list td', { hasText: '(replay)' }).first().waitFor();
  await check(page, 'webhook-deliveries');
});

test('funds an account, issues a card and authorizes purchases (one declined, with its reason)', async () => {
  const { page } = owner;
  await visit(page, server.base_url, `/sandbox?fund=${server.first.account_id}`, 'Sandbox tools');
  await page.fill('input[name=fund_amount]', '100.000');
  await page.click('button:has-text("Fund account")');
  await page.locator('#funded-balance').waitFor();
  assert.match(await page.locator('#funded-balance').innerText(), /^COP [0-9.]+,\d\d$/);
  await visit(page, server.base_url, '/accounts', 'Accounts');
  await check(page, 'accounts');

  await visit(page, server.base_url, '/cards', 'Cards');
  await page.selectOption('select[name=account_id]', server.first.account_id);
  await page.fill('input[name=nickname]', 'Browser card');
  await page.fill('input[name=initial_balance]', '20.000');
  const account_option = page.locator(`select[name=account_id] option[value="${server.first.account_id}"]`);
  const option_before = await account_option.innerText();
  await page.click('button:has-text("Issue card")');
  // A visible confirmation that links to the card; the list and the account's balance in the
  // form's choice are up to date without opening the page again.
  const issued = page.locator('form[aria-label="Issue a virtual card"] .success', { hasText: 'Issued the card' });
  await issued.waitFor();
  await page.locator('#card-list td', { hasText: 'Browser card' }).waitFor();
  assert.notEqual(await account_option.innerText(), option_before, 'the account choice shows its new balance');
  await check(page, 'cards');
  const card = (await console_api(page, 'GET', '/v1/cards')).body.cards.find((item) => item.nickname === 'Browser card');
  state.card_id = card.id;
  assert.equal(await issued.locator('a').getAttribute('href'), `#/cards/${card.id}`);

  await visit(page, server.base_url, `/sandbox?card=${card.id}`, 'Sandbox tools');
  const card_option = page.locator(`select[name=card] option[value="${card.id}"]`);
  assert.match(await card_option.innerText(), /COP 20\.000,00/);
  const tool = page.locator('form[aria-label="Authorize a card purchase"]');
  await page.fill('input[name=authorization_amount]', '5.000');
  await page.click('button:has-text("Authorize")');
  await tool.locator('.success', { hasText: 'authorization approved' }).waitFor();
  assert.match(await card_option.innerText(), /COP 15\.000,00/, 'the card choice shows the hold');
  // A decline is a failure: red, with what to change, and it replaces the approval's message.
  await page.fill('input[name=authorization_amount]', '900.000');
  await page.click('button:has-text("Authorize")');
  await tool.locator('.error', { hasText: 'insufficient funds' }).waitFor();
  assert.match(await tool.locator('.error').innerText(), /Fund the card or authorize less/);
  assert.equal(await tool.locator('.success').count(), 0, 'the approval message is gone');
  await check(page, 'sandbox-declined');

  await visit(page, server.base_url, `/cards/${card.id}`, `Card •••• ${card.last_four}`);
  const declined = page.locator('#transaction-list tr', { hasText: 'authorization declined' });
  assert.match(await declined.locator('td[data-label="Decline reason"]').innerText(), /insufficient funds/);
  assert.match(await page.locator('main').innerText(), /COP 15\.000,00/, 'COP 20.000 less the 5.000 held');
  await check(page, 'card');
  // Each transaction has a page of its own: its amounts, its decision and its steps.
  await declined.locator('td[data-label="Merchant"] a').click();
  await settle(page, 'authorization declined');
  assert.match(await page.locator('main').innerText(), /insufficient funds/);
  assert.match(await page.locator('main').innerText(), /COP 900\.000,00/);
  await check(page, 'card-transaction');
});

test('adds a cardholder and issues a card to them', async () => {
  const { page } = owner;
  await visit(page, server.base_url, '/cardholders', 'Cardholders');
  await page.fill('input[name=first_name]', 'Ana');
  await page.fill('input[name=last_name]', 'Rojas');
  await page.fill('input[name=email]', 'not an email');
  await page.click('button:has-text("Add cardholder")');
  // The API's error names the field as the form labels it.
  const form = page.locator('form[aria-label="Add a cardholder"]');
  await form.locator('tesoro-error .error').waitFor();
  assert.match(await form.locator('tesoro-error').innerText(), /Email \(optional\): /);
  assert.equal(await page.getAttribute('input[name=email]', 'aria-invalid'), 'true');
  await page.fill('input[name=email]', 'ana@example.com');
  await page.click('button:has-text("Add cardholder")');
  await form.locator('.success', { hasText: 'Added Ana Rojas' }).waitFor();
  assert.equal(await form.locator('tesoro-error').count(), 0, 'the error is gone');
  await page.locator('#cardholder-list td', { hasText: 'Ana Rojas' }).waitFor();
  await check(page, 'cardholders');
  const cardholder = (await console_api(page, 'GET', '/v1/cards/cardholders')).body.cardholders[0];

  await visit(page, server.base_url, '/cards', 'Cards');
  await page.selectOption('select[name=cardholder_id]', cardholder.id);
  await page.fill('input[name=nickname]', 'Ana card');
  await page.click('button:has-text("Issue card")');
  await page.locator('form[aria-label="Issue a virtual card"] .success a').click();
  await settle(page, 'Card ••••');
  await page.locator('main a', { hasText: 'Ana Rojas' }).click();
  await settle(page, 'Ana Rojas');
  assert.match(await page.locator('main').innerText(), /ana@example\.com/);
  await check(page, 'cardholder');
});

test("an endpoint decides card authorizations: its settings set here, each decision shown", async () => {
  const { page } = owner;
  const decider = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ approved: false, reason: 'not on a weekday' }));
    });
  });
  await new Promise((resolve) => decider.listen(0, '127.0.0.1', resolve));
  try {
    const made = await console_api(page, 'POST', '/v1/webhook_endpoints', { body: {
      url: `http://127.0.0.1:${decider.address().port}/decide`, event_types: ['card_authorization.request'],
    } });
    assert.equal(made.status, 201);
    await visit(page, server.base_url, `/webhooks/${made.body.id}`, 'Webhook endpoint');
    assert.match(await page.locator('main').innerText(), /decides the card authorizations/);
    await page.fill('input[name=authorization_timeout_ms]', '1500');
    await page.selectOption('select[name=authorization_fallback]', 'approve');
    await page.click('button:has-text("Save")');
    await page.locator('dd', { hasText: '1500 ms' }).waitFor();
    await check(page, 'webhook-authorizations');
    const saved = (await console_api(page, 'GET', `/v1/webhook_endpoints/${made.body.id}`)).body;
    assert.equal(saved.authorization_timeout_ms, 1500);
    assert.equal(saved.authorization_fallback, 'approve');

    const declined = await console_api(page, 'POST', `/v1/sandbox/cards/${state.card_id}/authorizations`, { body: {
      amount: { amount: 100000, currency: 'COP' },
      merchant: { name: 'Weekend Shop', mcc: '5411', mid: 'W1', country: 'CO' },
      channel: 'online_purchase',
    } });
    assert.equal(declined.status, 201);
    assert.equal(declined.body.decision.by, 'endpoint');
    const card = (await console_api(page, 'GET', `/v1/cards/${state.card_id}`)).body;
    await visit(page, server.base_url, `/cards/${state.card_id}`, `Card •••• ${card.last_four}`);
    const row = page.locator('#transaction-list tr', { hasText: 'Weekend Shop' });
    assert.match(await row.locator('td[data-label="Decided by"]').innerText(), /Your endpoint: declined in \d+ ms/);
    assert.match(await row.locator('td[data-label="Decline reason"]').innerText(), /not on a weekday/);
    const earlier = page.locator('#transaction-list tr', { hasText: 'authorization approved' }).first();
    assert.equal((await earlier.locator('td[data-label="Decided by"]').innerText()).trim(), 'Tesoro');
    await check(page, 'card-decisions');

    await visit(page, server.base_url, `/webhooks/${made.body.id}`, 'Webhook endpoint');
    await page.locator('#delivery-list td', { hasText: 'webhook declined' }).waitFor();
    assert.equal(await page.locator('#delivery-list button', { hasText: 'Replay' }).count(), 0);
    assert.equal((await console_api(page, 'DELETE', `/v1/webhook_endpoints/${made.body.id}`)).status, 204);
  } finally {
    await new Promise((resolve) => decider.close(resolve));
  }
});

test('sends a transfer to a key and follows its batch, state and timemarks', async () => {
  const { page } = owner;
  const originator = server.first.tenant_account_ids[1];
  await visit(page, server.base_url, `/sandbox?fund=${originator}`, 'Sandbox tools');
  await page.fill('input[name=fund_amount]', '200.000');
  await page.click('button:has-text("Fund account")');
  await page.locator('#funded-balance').waitFor();
  await page.selectOption('select[name=tenant_account_id]', originator);
  await page.fill('input[name=key]', '3001234567');
  await page.fill('input[name=transfer_amount]', '10.000');
  await page.click('button:has-text("Send transfer")');
  await page.locator('a', { hasText: 'Follow it' }).click();
  await settle(page, 'Outgoing transfers');
  assert.match(await page.locator('main').innerText(), /T110/);
  assert.match(await page.locator('main').innerText(), /COP 10\.000,00/);
  await poll('the transfer to end', async () => {
    await page.reload();
    await settle(page, 'Outgoing transfers');
    return /successful|failed/.test(await page.locator('td[data-label="State"]').first().innerText());
  }, 20000);
  assert.match(await page.locator('main').innerText(), /T130/);
  await check(page, 'transfers');

  await visit(page, server.base_url, '/events', 'Events');
  assert.match(await page.locator('#event-list').innerText(), /outgoing_transfer\.created/);
  await page.fill('input[name=type]', 'collection.*');
  await page.click('button:has-text("Filter")');
  await page.waitForURL(/type=collection/);
  await poll('the filtered list', async () => {
    const text = await page.locator('#event-list').innerText();
    return text.includes('collection.attempt_successful') && !text.includes('outgoing_transfer.');
  });
  // Every event's data opened: the JSON scrolls inside its box, the page does not widen.
  for (const summary of await page.locator('#event-list summary').all()) await summary.click();
  await check(page, 'events');
});

test("a failing endpoint's deliveries show their error at a readable width", async () => {
  const { page } = owner;
  // Port 9 on the loopback refuses connections; loopback URLs are allowed in the sandbox.
  const endpoint = (await console_api(page, 'POST', '/v1/webhook_endpoints', {
    body: { url: 'http://127.0.0.1:9/refused-by-the-receiver-with-a-long-path/tesoro/webhooks', description: 'refuses', event_types: ['cardholder.created'] },
  })).body;
  assert.ok(endpoint.id, 'the endpoint was registered');
  await console_api(page, 'POST', '/v1/cards/cardholders', { body: { first_name: 'Delivery', last_name: 'Failure' } });
  // Delivered in the background: the page is drawn again from the server until it shows.
  await visit(page, server.base_url, `/webhooks/${endpoint.id}`, 'Webhook endpoint');
  await poll('a failed delivery', async () => {
    await page.reload();  // the same route: drawn again from the server
    await settle(page, 'Webhook endpoint');
    return (await page.locator('#delivery-list').innerText()).includes('no response');
  });
  const error = page.locator('#delivery-list td[data-label="Error"]').first();
  assert.notEqual((await error.innerText()).trim(), '—', 'the error is shown');
  assert.ok((await error.boundingBox()).height < 120, 'the error is not wrapped a word a line');
  await check(page, 'webhook-failing');
  await console_api(page, 'DELETE', `/v1/webhook_endpoints/${endpoint.id}`);
});

test('adds an account holder', async () => {
  const { page } = owner;
  await visit(page, server.base_url, '/holders', 'Account holders');
  for (const [name, value] of [['first_name', 'Ana'], ['last_name', 'Gómez'], ['document_number', '1012345678'],
    ['line_1', 'Calle 1 # 2-3'], ['city', 'Bogotá'], ['state', 'Cundinamarca'], ['zip_code', '110111']]) {
    await page.fill(`input[name=${name}]`, value);
  }
  await page.click('button:has-text("Add account holder")');
  await page.locator('#holder-list td', { hasText: 'Ana Gómez' }).waitFor();
  await check(page, 'holders');
});

test("an account's page shows its statement, its balance as of a time, and downloads it as CSV", async () => {
  const { page } = owner;
  const id = server.first.account_id;
  await visit(page, server.base_url, '/accounts', 'Accounts');
  await page.locator('#account-list a', { hasText: /./ }).first().waitFor();
  const account = (await console_api(page, 'GET', `/v1/accounts/${id}`)).body;
  await page.click(`#account-list a[href="#/accounts/${id}"]`);
  await settle(page, account.name);
  // Newest first: the card's initial balance (20.000) left the account after its funding.
  const rows = page.locator('#statement tbody tr');
  assert.ok(await rows.count() >= 2);
  const balance_text = (await page.locator('dd', { hasText: /^COP / }).nth(2).innerText()).trim();
  assert.equal((await rows.first().locator('td[data-label="Balance after"]').innerText()).trim(), balance_text,
    'the newest posting left the balance shown');
  assert.match(await rows.first().locator('td[data-label="Caused by"]').innerText(), /card balance operation\s+cbo_/);
  assert.match(await rows.first().locator('td[data-label="Debit"]').innerText(), /COP 20\.000,00/);
  assert.match(await page.locator('#statement').innerText(), /sandbox funding/);
  await check(page, 'account');

  await page.fill('input[name=as_of]', '2000-01-01T00:00');
  await page.click('button:has-text("Show balance")');
  await page.locator('.as-of', { hasText: 'COP 0,00' }).waitFor();

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:has-text("Download CSV")')]);
  assert.equal(download.suggestedFilename(), `${id}-statement.csv`);
  const csv = fs.readFileSync(await download.path(), 'utf8').split('\r\n').filter(Boolean);
  assert.equal(csv[0], 'id,created_at,direction,amount,currency,balance_after,description,reference_type,reference_id,journal_entry_id');
  assert.equal(csv.length - 1, await rows.count(), 'a row per posting (fewer than a page here)');
  assert.match(csv[1], /,debit,2000000,COP,/);

  await page.fill('input[name=from]', '2999-01-01T00:00');
  await page.click('form[aria-label="Filter the statement"] button');
  await page.locator('#statement', { hasText: 'No postings in this period.' }).waitFor();
  assert.match(page.url(), /from=2999-01-01T00%3A00%3A00Z/);
});

test("an account holder's page lists their accounts, each linked to its statement", async () => {
  const { page } = owner;
  await visit(page, server.base_url, '/holders', 'Account holders');
  await page.click('#holder-list a:has-text("Ana Gómez")');
  await settle(page, 'Ana Gómez');
  await page.locator('#holder-accounts', { hasText: 'No accounts yet' }).waitFor();
  const holder_id = decodeURIComponent(page.url().split('#/holders/')[1]);
  const opened = await console_api(page, 'POST', '/v1/ledger/accounts',
    { body: { name: 'Ana savings', type: 'savings_account', currency: 'COP', account_holder_id: holder_id } });
  assert.equal(opened.status, 201);
  await page.reload();  // the same route: its list read again
  await settle(page, 'Ana Gómez');
  await page.click('#holder-accounts a:has-text("Ana savings")');
  await settle(page, 'Ana savings');
  await page.locator('#statement', { hasText: 'No postings in this period.' }).waitFor();
  await check(page, 'holder-account');
});

test("a tenant account's page shows the payments it received", async () => {
  const { page } = owner;
  await visit(page, server.base_url, '/tenant-accounts', 'Tenant accounts');
  const receptor = (await console_api(page, 'GET', '/api/v1/tenant/accounts?role=receptor')).body[0];
  await page.click(`a[href="#/tenant-accounts/${receptor.id}"]`);
  await settle(page, `Tenant account ${receptor.number}`);
  await page.locator('#statement td[data-label="Caused by"]', { hasText: 'collection attempt' }).first().waitFor();
  await check(page, 'tenant-account');
});

test('advances the tenant clock', async () => {
  const { page } = owner;
  const expiring = await console_api(page, 'POST', `/api/v1/collections/${state.collection_id}/qr`, {
    body: { usage_mode: 'single_use', amount: { amount: 100000, currency: 'COP' }, expiration_seconds: 3600 },
  });
  assert.equal(expiring.status, 201);
  const before_clock = (await console_api(page, 'GET', '/api/v1/sandbox/clock')).body;
  await visit(page, server.base_url, '/sandbox', 'Sandbox tools');
  await page.fill('input[name=clock_amount]', '2');
  await page.selectOption('select[name=clock_unit]', '86400');
  await page.click('button:has-text("Advance clock")');
  await page.locator('.success', { hasText: 'The tenant clock is now' }).waitFor();
  const after_clock = (await console_api(page, 'GET', '/api/v1/sandbox/clock')).body;
  assert.equal(after_clock.offset_seconds - before_clock.offset_seconds, 172800);
  assert.equal(await page.locator('#clock-now time').getAttribute('datetime') !== null, true);
  assert.equal((await page.locator('#clock-now').innerText()).slice(0, 10), after_clock.now.slice(0, 10));
  await check(page, 'sandbox');

  // The code that expired in an hour is past its time on the tenant clock.
  const attempt = await console_api(page, 'POST', '/api/v1/sandbox/collections/attempts', {
    body: { amount: { amount: 100000, currency: 'COP' }, creditor_key_type: expiring.body.key_type,
      creditor_key_value: expiring.body.key_value, payment_id: expiring.body.payment_id },
  });
  assert.equal(attempt.body.attempt_state_reason, 'qr_expired');
});

test("a second tenant's user sees none of the first's objects, direct URLs included", async () => {
  other = await open_browser();
  const { page } = other;
  await sign_in(page, server.second.owner_email, server.second.owner_password);
  assert.match(await page.locator('main').innerText(), new RegExp(server.second.tenant_id));

  for (const [route, heading] of [[`/collections/${state.collection_id}`, 'Collection'],
    [`/cards/${state.card_id}`, 'Card'], [`/webhooks/${state.endpoint_id}`, 'Webhook endpoint']]) {
    await visit(page, server.base_url, route, heading);
    const text = await page.locator('main').innerText();
    assert.match(text, /404/, `${route} is not found for the second tenant`);
    assert.doesNotMatch(text, /Browser shop|Browser card|browser test receiver/);
  }
  await check(page, 'other-tenant-direct-url');
  await visit(page, server.base_url, '/collections', 'Collections');
  assert.match(await page.locator('#collection-list').innerText(), /No collections yet/);
  await visit(page, server.base_url, '/keys', 'API keys');
  assert.doesNotMatch(await page.locator('main').innerText(), new RegExp(state.key_prefix));

  assert.equal((await console_api(page, 'GET', `/api/v1/collections/${state.collection_id}`)).status, 404);
  assert.equal((await console_api(page, 'GET', `/v1/cards/${state.card_id}`)).status, 404);
  assert.equal((await console_api(page, 'GET', `/v1/webhook_endpoints/${state.endpoint_id}`)).status, 404);
  const first_keys = (await console_api(owner.page, 'GET', '/keys')).body.data;
  const live = first_keys.find((key) => !key.revoked_at);
  assert.equal((await console_api(page, 'DELETE', `/keys/${live.id}`)).status, 404);
  const still = (await console_api(owner.page, 'GET', '/keys')).body.data.find((key) => key.id === live.id);
  assert.equal(still.revoked_at, null, "the first tenant's key is untouched");
});

test('a state change without the CSRF token, or from another origin, is refused', async () => {
  const { page } = owner;
  const count = (await console_api(page, 'GET', '/keys')).body.data.length;
  const without = await console_api(page, 'POST', '/keys', { body: { environment: 'sandbox', scopes: ['ledger:read'] }, csrf: false });
  assert.equal(without.status, 403);
  assert.equal(without.body.errors[0].error_code, 'not_authorized');
  assert.match(JSON.stringify(without.body), /CSRF/i);
  const clock = (await console_api(page, 'GET', '/api/v1/sandbox/clock')).body;
  const advance = await console_api(page, 'POST', '/api/v1/sandbox/clock/advance', { body: { seconds: 60 }, csrf: false });
  assert.equal(advance.status, 403);
  assert.equal((await console_api(page, 'GET', '/api/v1/sandbox/clock')).body.offset_seconds, clock.offset_seconds);

  // The right token, from a page of another origin: refused too.
  const cookies = await owner.context.cookies(server.base_url);
  const cookie = cookies.map((item) => `${item.name}=${item.value}`).join('; ');
  const session = (await console_api(page, 'GET', '/session')).body;
  const foreign = await fetch(`${server.base_url}/console/api/keys`, {
    method: 'POST',
    headers: { Cookie: cookie, 'X-CSRF-Token': session.csrf_token, Origin: 'http://attacker.example',
      'Content-Type': 'application/json' },
    body: JSON.stringify({ environment: 'sandbox', scopes: ['ledger:read'] }),
  });
  assert.equal(foreign.status, 403);
  assert.equal((await console_api(page, 'GET', '/keys')).body.data.length, count, 'no key was made');
});

test('every control of the main pages is reached by the keyboard', async () => {
  const { page } = owner;
  for (const [route, heading] of [['/', 'Overview'], ['/keys', 'API keys'], ['/webhooks', 'Webhook endpoints'],
    ['/accounts', 'Accounts'], [`/cards/${state.card_id}`, 'Card'], [`/collections/${state.collection_id}`, 'Collection'],
    ['/sandbox', 'Sandbox tools']]) {
    await visit(page, server.base_url, route, heading);
    assert.deepEqual(await keyboard_unreachable(page), [], `controls of ${route} Tab never reaches`);
  }
});

test('is usable 390 pixels wide', async () => {
  const { page } = owner;
  await page.setViewportSize({ width: 390, height: 844 });
  await visit(page, server.base_url, '/', 'Overview');
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(await overflow() <= 0, 'no sideways scrolling of the page');
  await check(page, 'phone-overview');
  await page.focus('button.menu-button');
  await page.keyboard.press('Enter');
  await page.locator('nav a', { hasText: 'API keys' }).click();
  await settle(page, 'API keys');
  assert.ok(await overflow() <= 0);
  await check(page, 'phone-keys');
  await visit(page, server.base_url, `/collections/${state.collection_id}`, 'Collection');
  assert.ok(await overflow() <= 0);
  await check(page, 'phone-collection');
  await visit(page, server.base_url, '/sandbox', 'Sandbox tools');
  assert.ok(await overflow() <= 0);
  await check(page, 'phone-sandbox');
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('signs out: the session is refused from then on', async () => {
  const { page, context } = owner;
  const cookies = await context.cookies(server.base_url);
  const cookie = cookies.map((item) => `${item.name}=${item.value}`).join('; ');
  await visit(page, server.base_url, '/', 'Overview');
  await page.click('button:has-text("Sign out")');
  await settle(page, 'Sign in');
  const answer = await fetch(`${server.base_url}/console/api/session`, { headers: { Cookie: cookie } });
  assert.equal(answer.status, 401);
});

test('sandbox tools are hidden from a production tenant', async () => {
  const production = server.command(['tenant', 'create', '--name', 'Production tenant',
    '--environment', 'production', '--public-url', server.base_url, '--json']);
  const { page } = other;
  await visit(page, server.base_url, '/', 'Overview');
  await page.click('button:has-text("Sign out")');
  await settle(page, 'Sign in');
  // A server runs in one environment: the same store served as production.
  await server.restart(['--environment', 'production']);
  await sign_in(page, production.owner_email, production.owner_password);
  assert.match(await page.locator('header').innerText(), /production/);
  assert.equal(await page.locator('nav a', { hasText: 'Sandbox tools' }).count(), 0);
  assert.doesNotMatch(await page.locator('main').innerText(), /Tenant clock/);
  await visit(page, server.base_url, '/sandbox', 'Not found');
  await check(page, 'production-no-sandbox');
});

test('no page logged an error or broke the Content-Security-Policy', () => {
  assert.deepEqual(owner.problems, []);
  assert.deepEqual(other.problems, []);
});
