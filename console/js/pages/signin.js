// Sign in: email and password of a console user (`tesoro init` prints the owner's once).
import { h, field, input } from '../dom.js';
import { post } from '../api.js';
import { action_form } from '../ui.js';

export const title = 'Sign in';

export async function render(context) {
  const expired = context.route.query.expired === '1';
  const form = action_form({
    label: 'Sign in',
    button: 'Sign in',
    fields: [
      field('Email', input('email', { type: 'email', autocomplete: 'username', required: true })),
      field('Password', input('password', { type: 'password', autocomplete: 'current-password', required: true })),
    ],
    submit: (form_element) => post('/session', {
      email: form_element.elements.email.value.trim(),
      password: form_element.elements.password.value,
    }),
    done: (session) => context.signed_in(session),
  });
  return h('div', { class: 'signin' },
    h('h1', {}, 'Sign in to the Tesoro console'),
    expired ? h('p', { class: 'notice', role: 'status' }, 'Your session ended. Sign in again.') : null,
    form,
    h('p', { class: 'hint' }, 'The owner of a new tenant signs in with the email and password that ',
      h('code', {}, 'tesoro init'), ' or ', h('code', {}, 'tesoro tenant create'), ' printed.'));
}
