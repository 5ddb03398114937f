// Every call of the console goes through here: to /console/api/... with the session cookie
// (HttpOnly, so this code never sees it); every state change carries the session's CSRF token
// and a fresh idempotency key. Errors arrive as ApiError with the API's envelope.

const k_base = '/console/api';
const k_state_changes = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

let csrf_token = null;
const expiry_listeners = new Set();

export function setCsrfToken(token) {
  csrf_token = token;
}

// Called when a request other than sign-in answers 401: the session ended (expired, signed
// out elsewhere); the app goes back to the sign-in page.
export function onSessionExpired(listener) {
  expiry_listeners.add(listener);
}

export class ApiError extends Error {
  constructor(status, envelope, retry_after) {
    super(envelope?.message ?? `HTTP ${status}`);
    this.status = status;
    this.envelope = envelope;
    this.retry_after = retry_after;
  }

  // The envelope's items: [{error_code, message, path}]
  get problems() {
    return Array.isArray(this.envelope?.errors) ? this.envelope.errors : [];
  }

  get code() {
    return this.problems[0]?.error_code ?? null;
  }
}

// A UUID v4: crypto.randomUUID where the page is a secure context (https, 127.0.0.1,
// localhost), else built from crypto.getRandomValues, which every context has.
export function newIdempotencyKey() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function url_of(path, query) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== null && value !== undefined && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return `${k_base}${path}${text ? `?${text}` : ''}`;
}

async function body_of(response) {
  const type = response.headers.get('content-type') ?? '';
  if (response.status === 204 || !type.includes('json')) return null;
  try {
    return await response.json();
  } catch {
    return null;
  }
}

// request('GET', '/v1/accounts', {query: {page_number: 2}})
// request('POST', '/keys', {body: {...}})
// request('GET', '/v1/accounts/acc_.../entries', {accept: 'text/csv'}): the body as text.
export async function request(method, path, { body, query, accept = 'application/json' } = {}) {
  const headers = { Accept: accept };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (k_state_changes.has(method)) {
    if (csrf_token) headers['X-CSRF-Token'] = csrf_token;
    headers['X-Idempotency-Key'] = newIdempotencyKey();
  }
  let response;
  try {
    response = await fetch(url_of(path, query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch (cause) {
    throw new ApiError(0, {
      message: 'The server could not be reached.',
      errors: [{ error_code: 'network_error', message: String(cause?.message ?? cause), path: null }],
    });
  }
  if (response.ok && accept !== 'application/json') return response.text();
  const data = await body_of(response);
  if (response.ok) return data;
  const error = new ApiError(response.status, data, response.headers.get('retry-after'));
  if (response.status === 401 && path !== '/session') {
    for (const listener of expiry_listeners) listener(error);
  }
  throw error;
}

export const get = (path, query) => request('GET', path, { query });
export const get_csv = (path, query) => request('GET', path, { query, accept: 'text/csv' });
export const post = (path, body = {}) => request('POST', path, { body });
export const patch = (path, body = {}) => request('PATCH', path, { body });
export const del = (path) => request('DELETE', path);
