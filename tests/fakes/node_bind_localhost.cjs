// Preloaded into Node test servers (NODE_OPTIONS=--require ...) that listen on a port without
// naming a host: binds them to 127.0.0.1 so tests never open a port on other interfaces.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  const isPort = typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first));
  if (isPort && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
