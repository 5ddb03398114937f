// One collection: its limits and keys, a QR code created here (its image shown and
// downloadable), and its payment attempts.
import { h, field, input, select, section, code, details_list, link, id_text, money } from '../dom.js';
import { get, post } from '../api.js';
import { time } from '../components.js';
import { formatMoney, formatAmountInput, humanize } from '../format.js';
import { action_form, amount_field, paged_table, read_amount, load_into } from '../ui.js';
import { href } from '../router.js';
import { collection_state } from './collections.js';

export const title = 'Collection';

function attempt_list(context, id) {
  return paged_table({
    path: `/api/v1/collections/${encodeURIComponent(id)}/attempts`,
    plural: 'attempts',
    caption: 'Payment attempts, newest first',
    route: context.route,
    empty: 'No attempts yet.',
    columns: [
      ['When', (attempt) => time(attempt.inserted_at)],
      ['Amount', (attempt) => h('span', { class: 'money' }, formatMoney(attempt.amount))],
      ['State', (attempt) => attempt.state],
      ['Reason', (attempt) => humanize(attempt.state_reason)],
      ['Payer', (attempt) => `${attempt.payer?.name ?? '—'} (${attempt.payer?.document_type ?? ''} ${attempt.payer?.document_number ?? ''})`],
      ['QR code', (attempt) => id_text(attempt.qr_code_id)],
    ],
  });
}

// Every QR code of the collection, newest first (GET .../qr; the image comes on creation only).
function qr_list(context, collection) {
  return paged_table({
    path: `/api/v1/collections/${encodeURIComponent(collection.id)}/qr`,
    plural: 'qr_codes',
    caption: 'QR codes, newest first',
    route: context.route,
    page_param: 'qr_page',
    empty: 'No QR codes yet.',
    columns: [
      ['Created', (qr) => time(qr.inserted_at)],
      ['Kind', (qr) => (qr.usage_mode === 'single_use' ? 'dynamic' : 'static')],
      ['Amount', (qr) => (qr.amount ? money(formatMoney(qr.amount)) : 'typed by the payer')],
      ['Expires', (qr) => time(qr.expires_at)],
      ['Payments', (qr) => `${qr.successful_attempts} paid, ${qr.failed_attempts} failed`],
      ['Payment id', (qr) => id_text(qr.payment_id)],
      ['Id', (qr) => id_text(qr.id)],
      ...(context.is_sandbox ? [['', (qr) => link(href('/sandbox', {
        key_type: qr.key_type, key_value: qr.key_value, payment_id: qr.payment_id,
        amount: qr.amount ? formatAmountInput(qr.amount.amount) : '', collection: collection.id,
      }), 'Simulate a payment', { 'aria-label': `Simulate a payment on QR ${qr.payment_id}` })]] : []),
    ],
  });
}

// The QR just created: its PNG (the API sends it as a data: URL, on creation only), a link
// that downloads it, and its payload.
function show_qr(context, collection, qr) {
  const amount_text = qr.amount ? formatMoney(qr.amount) : 'any amount';
  return h('div', { class: 'qr', id: 'qr-result' },
    h('figure', {},
      h('img', { src: qr.image, width: '240', height: '240', class: 'qr-image',
        alt: `QR code for key ${qr.key_value}, ${amount_text}` }),
      h('figcaption', {}, `${qr.usage_mode === 'single_use' ? 'Dynamic' : 'Static'} QR, ${amount_text}`)),
    h('p', {}, h('a', { href: qr.image, download: `${qr.id}.png`, class: 'button secondary' }, 'Download PNG')),
    details_list([
      ['QR id', id_text(qr.id)],
      ['Payment id', id_text(qr.payment_id)],
      ['Key', `${qr.key_type} ${qr.key_value}`],
      ['Expires', time(qr.expires_at)],
      ['EMVCo payload', h('code', { class: 'wrap' }, qr.emvco)],
    ]),
    context.is_sandbox ? h('p', {}, link(href('/sandbox', {
      key_type: qr.key_type, key_value: qr.key_value, payment_id: qr.payment_id,
      amount: qr.amount ? formatAmountInput(qr.amount.amount) : '', collection: collection.id,
    }), 'Simulate a payment on this QR')) : null);
}

function qr_form(context, collection, list) {
  const slot = h('div', { class: 'created' });
  const form = action_form({
    outcome: slot,
    label: 'Create a QR code',
    button: 'Create QR code',
    fields: [h('div', { class: 'grid' },
      // A single-use collection is paid once: only a dynamic (single-use) code fits it.
      field('Kind', select('usage_mode', collection.usage_mode === 'single_use'
        ? [['single_use', 'dynamic (single use)']]
        : [['multiple_use', 'static (multiple use)'], ['single_use', 'dynamic (single use)']])),
      amount_field('amount', 'Amount (required for dynamic)'),
      field('Expires in seconds (dynamic only)', input('expiration_seconds', { type: 'number', min: '1', max: '6220800', inputmode: 'numeric' })),
      field('Error correction', select('error_correction_level', [['medium', 'medium'], ['low', 'low'], ['quarter', 'quarter'], ['high', 'high']])),
      field('Image width (pixels)', input('image_width', { type: 'number', min: '400', max: '2048', value: '400', inputmode: 'numeric' })))],
    submit: (form_element) => {
      const body = {
        usage_mode: form_element.elements.usage_mode.value,
        error_correction_level: form_element.elements.error_correction_level.value,
      };
      const amount = read_amount(form_element, 'amount', { required: false });
      if (amount) body.amount = amount;
      const expiration = form_element.elements.expiration_seconds.value.trim();
      if (expiration) body.expiration_seconds = Number(expiration);
      const width = form_element.elements.image_width.value.trim();
      if (width) body.image_width = Number(width);
      return post(`/api/v1/collections/${encodeURIComponent(collection.id)}/qr`, body);
    },
    done: async (qr) => {
      await load_into(list, () => qr_list(context, collection));
      return show_qr(context, collection, qr);
    },
  });
  return [form, slot];
}

export async function render(context) {
  const id = context.params.id;
  const collection = await get(`/api/v1/collections/${encodeURIComponent(id)}`);
  const attempts = h('div', { id: 'attempt-list' });
  await load_into(attempts, () => attempt_list(context, id));
  const payable = collection.state === 'ready' || collection.state === 'minimum_paid';
  const codes = h('div', { id: 'qr-list' });
  await load_into(codes, () => qr_list(context, collection));
  return h('div', {},
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/collections' }, 'Collections'), ' / ', collection.external_id),
    h('h1', {}, `Collection ${collection.nickname || collection.external_id}`),
    section('Collection', details_list([
      ['State', collection_state(collection.state)],
      ['Paid', money(formatMoney(collection.paid_amount))],
      // What can still be paid: nothing once the collection no longer takes payments.
      ['Remaining', payable ? money(formatMoney(collection.remaining_amount)) : `nothing: the collection is ${humanize(collection.state)}`],
      ['Payments between', `${formatMoney(collection.minimum_attempt_amount)} and ${formatMoney(collection.maximum_attempt_amount)}`],
      ['Collect between', `${formatMoney(collection.total_minimum_amount)} and ${formatMoney(collection.total_maximum_amount)}`],
      ['Usage', humanize(collection.usage_mode)],
      ['Key', collection.key ? `${collection.key.type} ${collection.key.value}` : '—'],
      ['Receptor account', id_text(collection.tenant_account_id, href(`/tenant-accounts/${collection.tenant_account_id}`))],
      ['External id', collection.external_id],
      ['Id', id_text(collection.id)],
      ['Expires', time(collection.expires_at)],
      ['Created', time(collection.inserted_at)],
    ])),
    section('QR codes', codes),
    payable ? section('Create a QR code', qr_form(context, collection, codes))
      : section('New QR codes', h('p', {}, `A ${humanize(collection.state)} collection cannot get new QR codes.`)),
    section('Attempts', attempts));
}
