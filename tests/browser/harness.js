// What the browser tests share: a real `tesoro` server of their own (SQLite in a temp folder,
// or a fresh PostgreSQL database when TESORO_TEST_DATABASE_URL is set), Debian's chromium
// driven by playwright-core (never a downloaded browser), screenshots, and page checks.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo_root = path.resolve(here, '..', '..');
const tesoro_bin = process.env.TESORO_BIN ?? path.join(repo_root, process.env.BUILD_DIR ?? 'build', 'tesoro');
const chromium_path = process.env.TESORO_CHROMIUM ?? '/usr/bin/chromium';

// Every answer the console receives is checked against openapi/tesoro.yaml, as the API tests
// check theirs (tests/contract/contract.js).
const { Contract, load } = createRequire(import.meta.url)('../contract/contract.js');
const contract = new Contract(load(path.join(repo_root, 'openapi', 'tesoro.yaml')));

async function contract_violation(response) {
  const request = response.request();
  const url = new URL(response.url());
  const status = response.status();
  // A redirect's body and a 304's are not the browser's to read.
  const body = status >= 300 && status < 400 ? '' : (await response.body()).toString('utf8');
  return contract.check({
    method: request.method(), path: url.pathname + url.search, status,
    headers: await response.allHeaders(), body,
  });
}

// Screenshots of every page, for people to look at (docs/console.md says where).
export const output_dir = process.env.TESORO_TEST_OUTPUT ??
  path.join(repo_root, process.env.BUILD_DIR ?? 'build', 'test-output', 'console',
    process.env.TESORO_TEST_DATABASE_URL ? 'postgresql' : 'sqlite');

export const engine = process.env.TESORO_TEST_DATABASE_URL ? 'postgresql' : 'sqlite';

async function free_port() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// A fresh empty PostgreSQL database next to the one TESORO_TEST_DATABASE_URL names.
function fresh_database_url(base) {
  const name = `tesoro_browser_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  execFileSync('psql', [base, '-qAtc', `CREATE DATABASE ${name}`], { stdio: 'pipe' });
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

function run_json(args) {
  const out = execFileSync(tesoro_bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return JSON.parse(out);
}

export class Server {
  async start() {
    this.data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tesoro-browser-'));
    this.port = await free_port();
    this.base_url = `http://127.0.0.1:${this.port}`;
    const database = process.env.TESORO_TEST_DATABASE_URL;
    this.store_flags = database ? ['--database-url', fresh_database_url(database)] : ['--data', this.data_dir];
    const public_url = ['--public-url', this.base_url];
    this.first = run_json(['init', ...this.store_flags, ...public_url, '--json']);
    this.second = run_json(['tenant', 'create', ...this.store_flags, '--name', 'Second tenant', ...public_url, '--json']);
    await this.serve([]);
    return this;
  }

  // `tesoro serve` on this store and port, with `extra` flags (`--environment production`).
  async serve(extra) {
    const log = fs.openSync(path.join(this.data_dir, 'server.log'), 'a');
    this.process = spawn(tesoro_bin, ['serve', '--listen', `127.0.0.1:${this.port}`, ...this.store_flags,
      '--public-url', this.base_url, '--rate-limit', '0', '--log-level', 'info', ...extra],
    { stdio: ['ignore', log, log] });
    fs.closeSync(log); // the child has its own copy
    this.exited = new Promise((resolve) => this.process.on('exit', resolve));
    const deadline = Date.now() + 30000;
    while (Date.now() < deadline) {
      try {
        const response = await fetch(`${this.base_url}/healthz`);
        if (response.status === 200) return this;
      } catch {
        // not listening yet
      }
      if (this.process.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`tesoro serve did not become healthy; log:\n${fs.readFileSync(path.join(this.data_dir, 'server.log'), 'utf8')}`);
  }

  // Another command of the CLI on this server's store (`tesoro tenant create ...`).
  command(args) {
    return run_json([...args.slice(0, 2), ...this.store_flags, ...args.slice(2)]);
  }

  // The same store served again with other flags.
  async restart(extra) {
    await this.halt();
    await this.serve(extra);
  }

  async halt() {
    if (this.process && this.process.exitCode === null) {
      this.process.kill('SIGTERM');
      const timer = setTimeout(() => this.process.kill('SIGKILL'), 10000);
      await this.exited;
      clearTimeout(timer);
    }
  }

  async stop() {
    await this.halt();
    if (this.data_dir) fs.rmSync(this.data_dir, { recursive: true, force: true });
  }
}

// One browser per user: a fresh profile folder (--user-data-dir) of its own, so cookies never
// cross between the users a test signs in.
export async function open_browser(width = 1280, height = 900) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tesoro-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromium_path,
    headless: true,
    viewport: { width, height },
    acceptDownloads: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const page = context.pages()[0] ?? await context.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // 4xx answers the tests provoke on purpose are logged by the browser as "Failed to load
    // resource"; anything else logged as an error (a CSP refusal, an exception) is a problem.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
      problems.push(`console error: ${message.text()}`);
    }
  });
  page.on('dialog', (dialog) => dialog.accept());
  // The server's answers (not data: URLs or blobs), checked when the browser closes.
  const checks = [];
  page.on('response', (response) => {
    if (!response.url().startsWith('http')) return;
    checks.push(contract_violation(response)
      .then((verdict) => verdict && `${response.request().method()} ${response.url()}: ${verdict}`)
      .catch(() => ''));  // a body the browser dropped (the page navigated away) is not an answer
  });
  return {
    context, page, problems,
    async close() {
      const violations = (await Promise.all(checks)).filter(Boolean);
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
      if (violations.length) {
        throw new Error(`answers that break openapi/tesoro.yaml:\n${violations.join('\n')}`);
      }
    },
  };
}

// Every visible form control has a label (a <label for>, or aria-label).
export async function unlabelled_controls(page) {
  return page.$$eval('input:not([type=hidden]), select, textarea', (controls) => controls
    .filter((control) => control.labels.length === 0 && !control.getAttribute('aria-label') &&
      !control.getAttribute('aria-labelledby'))
    .map((control) => control.outerHTML));
}

// What the page shows that does not fit its window: a page that scrolls sideways, and each
// visible element reaching past the window's right edge, unless a box that scrolls sideways
// holds it (a wide table scrolls inside its card). Empty when everything fits.
export async function overflow_problems(page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const problems = [];
    if (document.documentElement.scrollWidth > width) {
      problems.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px in a ${width} px window`);
    }
    const scrolls = (element) => {
      for (let box = element.parentElement; box; box = box.parentElement) {
        const overflow = getComputedStyle(box).overflowX;
        if (overflow === 'auto' || overflow === 'scroll' || overflow === 'hidden') return true;
      }
      return false;
    };
    for (const element of document.body.querySelectorAll('*')) {
      const rect = element.getBoundingClientRect();
      if (rect.width === 0 || rect.height === 0) continue;
      // Its box, or what spills out of it (a long word in a narrow box); a box that scrolls or
      // clips its content, and a form control (whose text scrolls inside it), spills nothing.
      const own = getComputedStyle(element).overflowX;
      const holds = own !== 'visible' || ['INPUT', 'SELECT', 'TEXTAREA'].includes(element.tagName);
      const right = holds ? rect.right : Math.max(rect.right, rect.left + element.scrollWidth);
      if (right > width + 0.5 && !scrolls(element)) {
        const name = element.tagName.toLowerCase() + (element.id ? `#${element.id}` : '') +
          (element.className && typeof element.className === 'string' ? `.${element.className.trim().replaceAll(' ', '.')}` : '');
        problems.push(`${name} ends at ${Math.round(right)} px in a ${width} px window: "${(element.textContent ?? '').trim().slice(0, 60)}"`);
        if (problems.length >= 10) break;
      }
    }
    return problems;
  });
}

// axe-core's serious and critical violations on the page as it is now ("rule: what, where").
// Its script is evaluated through the DevTools protocol, which the console's Content Security
// Policy (scripts from the server only) does not see; the policy itself stays on.
const axe_source = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export async function accessibility_problems(page) {
  if (!(await page.evaluate(() => typeof window.axe !== 'undefined'))) await page.evaluate(axe_source);
  return page.evaluate(async () => {
    const results = await window.axe.run(document, { resultTypes: ['violations'] });
    return results.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id} (${violation.impact}): ${violation.help}; ${violation.nodes
        .slice(0, 3).map((node) => node.target.join(' ')).join(', ')}`);
  });
}

// The visible controls of the page (links, buttons, fields, scrolling tables) that pressing
// Tab from the top never reaches: empty when every one can be reached by keyboard.
export async function keyboard_unreachable(page) {
  const names = await page.evaluate(() => {
    let next = 0;
    const controls = [...document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]')]
      .filter((element) => {
        const rect = element.getBoundingClientRect();
        return rect.width > 0 && rect.height > 0 && !element.disabled && element.tabIndex >= 0 &&
          !element.closest('[hidden], [inert]');
      });
    for (const element of controls) element.dataset.keyboardCheck = String(next++);
    document.activeElement?.blur();
    window.scrollTo(0, 0);
    return controls.length;
  });
  const reached = new Set();
  for (let press = 0; press < names + 5; press += 1) {
    await page.keyboard.press('Tab');
    const mark = await page.evaluate(() => document.activeElement?.dataset?.keyboardCheck ?? null);
    if (mark !== null) reached.add(mark);
  }
  return page.evaluate((seen) => [...document.querySelectorAll('[data-keyboard-check]')]
    .filter((element) => !seen.includes(element.dataset.keyboardCheck))
    .map((element) => element.outerHTML.slice(0, 120)), [...reached]);
}

// A screenshot of the page as it is now, in the output folder.
export async function screenshot(page, name) {
  fs.mkdirSync(output_dir, { recursive: true });
  const file = path.join(output_dir, `${name}.png`);
  await page.mouse.move(0, 0); // no hover highlight left where the last click was
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

// Open a console route and wait until its page has drawn (the main heading is there and the
// page is not busy).
export async function visit(page, base_url, route, heading) {
  await page.goto(`${base_url}/console/#${route}`);
  await settle(page, heading);
}

export async function settle(page, heading) {
  await page.waitForFunction(() => {
    const main = document.getElementById('main');
    return main && !main.hasAttribute('aria-busy') && main.querySelector('h1');
  });
  if (heading) await page.locator('main h1', { hasText: heading }).first().waitFor();
}

// The same call the console makes, from inside the page (the session cookie goes with it).
export async function console_api(page, method, api_path, { body, csrf = method !== 'GET' } = {}) {
  return page.evaluate(async ({ method, api_path, body, csrf }) => {
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (csrf) {
      const session = await (await fetch('/console/api/session')).json();
      headers['X-CSRF-Token'] = session.csrf_token;
    }
    const response = await fetch(`/console/api${api_path}`, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let json = null;
    try { json = JSON.parse(text); } catch { /* not JSON */ }
    return { status: response.status, body: json };
  }, { method, api_path, body, csrf });
}
