// The console's entry point: finds the session, draws the navigation for it and shows the
// page the hash names. Pages are modules exporting `title` and `render(context)`.
import { h, clear } from './dom.js';
import * as api from './api.js';
import { error_box } from './components.js';
import { current_route, match, go } from './router.js';
import * as signin from './pages/signin.js';
import * as overview from './pages/overview.js';
import * as keys from './pages/keys.js';
import * as clients from './pages/clients.js';
import * as webhooks from './pages/webhooks.js';
import * as webhook from './pages/webhook.js';
import * as accounts from './pages/accounts.js';
import * as account_page from './pages/account.js';
import * as tenant_accounts from './pages/tenant_accounts.js';
import * as tenant_account from './pages/tenant_account.js';
import * as holders from './pages/holders.js';
import * as holder from './pages/holder.js';
import * as cards from './pages/cards.js';
import * as card from './pages/card.js';
import * as card_transaction from './pages/card_transaction.js';
import * as cardholders from './pages/cardholders.js';
import * as cardholder from './pages/cardholder.js';
import * as collections from './pages/collections.js';
import * as collection from './pages/collection.js';
import * as transfers from './pages/transfers.js';
import * as events from './pages/events.js';
import * as sandbox from './pages/sandbox.js';

const k_routes = [
  ['/', overview],
  ['/keys', keys],
  ['/clients', clients],
  ['/webhooks', webhooks],
  ['/webhooks/:id', webhook],
  ['/accounts', accounts],
  ['/accounts/:id', account_page],
  ['/tenant-accounts', tenant_accounts],
  ['/tenant-accounts/:id', tenant_account],
  ['/holders', holders],
  ['/holders/:id', holder],
  ['/cards', cards],
  ['/cards/:id', card],
  ['/cards/:card_id/transactions/:id', card_transaction],
  ['/cardholders', cardholders],
  ['/cardholders/:id', cardholder],
  ['/collections', collections],
  ['/collections/:id', collection],
  ['/transfers', transfers],
  ['/events', events],
  ['/sandbox', sandbox],
];

// The navigation, grouped as the contract's "Pages" are; the sandbox group only in the sandbox.
const k_navigation = [
  ['Overview', [['/', 'Overview']]],
  ['Settings', [['/keys', 'API keys'], ['/clients', 'OAuth clients'], ['/webhooks', 'Webhook endpoints']]],
  ['Money', [['/accounts', 'Accounts'], ['/tenant-accounts', 'Tenant accounts'],
    ['/holders', 'Account holders'], ['/cardholders', 'Cardholders'], ['/cards', 'Cards'], ['/collections', 'Collections'],
    ['/transfers', 'Outgoing transfers'], ['/events', 'Events']]],
  ['Sandbox', [['/sandbox', 'Sandbox tools']], { sandbox_only: true }],
];

const main = document.getElementById('main');
const navigation = document.getElementById('nav');
const account = document.getElementById('account');
const announcer = document.getElementById('announcer');
let session = null;
let render_count = 0;

function is_sandbox() {
  return session?.tenant?.environment === 'sandbox';
}

function announce(text) {
  announcer.textContent = '';
  // A fresh text node after a tick, so screen readers read the same message twice in a row.
  setTimeout(() => { announcer.textContent = text; }, 50);
}

function draw_navigation() {
  clear(navigation);
  clear(account);
  if (!session) {
    navigation.hidden = true;
    return;
  }
  navigation.hidden = false;
  const links = h('div', { class: 'nav-links', id: 'nav-links' });
  for (const [group, items, options] of k_navigation) {
    if (options?.sandbox_only && !is_sandbox()) continue;
    links.append(h('h2', { class: 'nav-group' }, group),
      h('ul', {}, items.map(([path, text]) => h('li', {}, h('a', { href: `#${path}`, dataset: { path } }, text)))));
  }
  const toggle = h('button', { type: 'button', class: 'menu-button', 'aria-expanded': 'false',
    'aria-controls': 'nav-links' }, 'Menu');
  toggle.addEventListener('click', () => {
    const open = links.classList.toggle('open');
    toggle.setAttribute('aria-expanded', String(open));
  });
  navigation.append(toggle, links);
  account.append(
    h('span', { class: 'tenant' }, session.tenant.name, ' ',
      h('span', { class: `badge env-${session.tenant.environment}` }, session.tenant.environment)),
    h('span', { class: 'user' }, session.user.email),
    h('button', { type: 'button', class: 'secondary small', onclick: sign_out }, 'Sign out'));
}

function mark_current(path) {
  for (const anchor of navigation.querySelectorAll('a[data-path]')) {
    const here = anchor.dataset.path === path ||
      (anchor.dataset.path !== '/' && path.startsWith(`${anchor.dataset.path}/`));
    if (here) anchor.setAttribute('aria-current', 'page');
    else anchor.removeAttribute('aria-current');
  }
  navigation.querySelector('.nav-links')?.classList.remove('open');
  navigation.querySelector('.menu-button')?.setAttribute('aria-expanded', 'false');
}

async function sign_out() {
  try {
    await api.del('/session');
  } catch (error) {
    if (error.status !== 401) {
      clear(main).append(error_box(error));
      return;
    }
  }
  set_session(null);
  go('/signin');
}

function set_session(value) {
  session = value;
  api.setCsrfToken(value?.csrf_token ?? null);
  draw_navigation();
}

async function show() {
  const route = current_route();
  const ticket = ++render_count;
  let page;
  let params = {};
  if (!session) {
    page = signin;
  } else if (route.path === '/signin') {
    go('/');
    return;
  } else {
    const found = match(k_routes, route.path);
    if (found) ({ page, params } = found);
  }
  const context = {
    session,
    route,
    params,
    is_sandbox: is_sandbox(),
    announce,
    reload: show,
    signed_in: (value) => {
      set_session(value);
      const next = route.query.next && route.query.next !== '/signin' ? route.query.next : '/';
      go(next);
    },
  };
  let content;
  let title = 'Not found';
  if (!page || (page.sandbox_only && !is_sandbox())) {
    content = h('div', {}, h('h1', {}, 'Not found'),
      h('p', {}, 'This page does not exist in this console.'), h('p', {}, h('a', { href: '#/' }, 'Go to the overview')));
  } else {
    title = typeof page.title === 'function' ? page.title(context) : page.title;
    main.setAttribute('aria-busy', 'true');
    try {
      content = await page.render(context);
    } catch (error) {
      content = h('div', {}, h('h1', {}, title), error_box(error));
    }
    main.removeAttribute('aria-busy');
  }
  if (ticket !== render_count) return; // a newer navigation won
  clear(main).append(content);
  mark_current(route.path);
  document.title = `${title} · Tesoro console`;
  if (render_count > 1) main.focus();
}

api.onSessionExpired(() => {
  if (!session) return;
  set_session(null);
  const route = current_route();
  go('/signin', { next: route.path, expired: '1' });
});

document.getElementById('skip-link').addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});

window.addEventListener('hashchange', () => {
  if (!window.location.hash.startsWith('#/') && window.location.hash !== '') return;
  show();
});

async function start() {
  try {
    set_session(await api.get('/session'));
  } catch (error) {
    set_session(null);
    if (error.status !== 401) console.warn('session check failed', error);
    const route = current_route();
    if (route.path !== '/signin') {
      window.history.replaceState(null, '', `#/signin?next=${encodeURIComponent(route.path)}`);
    }
  }
  await show();
}

start();
