// Placeholder until the console's front end lands: shows who is signed in, if anyone.
const main = document.getElementById('app');
const answer = await fetch('/console/api/session', { credentials: 'same-origin' });
main.textContent = answer.ok
  ? `Signed in as ${(await answer.json()).user.email}`
  : 'Not signed in (POST /console/api/session with {"email", "password"}).';
