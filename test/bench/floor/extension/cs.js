// The floor extension's content script (isolated world): answer every message
// from our own service worker with the message itself, synchronously.
chrome.runtime.onMessage.addListener((msg, sender, respond) => {
  if (sender.id !== chrome.runtime.id) return false;
  respond(msg);
  return false;
});
