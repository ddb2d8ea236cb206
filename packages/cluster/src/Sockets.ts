// The sockets between runners: the library's plain TCP, or mutual TLS when the cluster has certificates.
import { layerClientProtocol as plainClientProtocol, layerSocketServer as plainSocketServer } from "@effect/platform-node-shared/NodeClusterSocket"
import * as NodeSocket from "@effect/platform-node-shared/NodeSocket"
import { Context, Effect, Exit, Fiber, Layer, Option, pipe, Scope } from "effect"
import * as NetAddress from "effect/net/NetAddress"
import type * as Socket from "effect/socket/Socket"
import * as SocketServer from "effect/socket/SocketServer"
import { type AddressInfo, isIP } from "node:net"
import * as Tls from "node:tls"
import * as Runners from "effect/cluster/Runners"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as RpcClient from "effect/rpc/RpcClient"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import { Socket as SocketService } from "effect/socket/Socket"
import type { ClusterTls } from "./Transport.ts"

/**
 * How a runner reaches the others: over TLS with `tls`, presenting its certificate and checking theirs (and their
 * host name or IP against it) with the cluster's CA; else the library's plain TCP.
 */
export const clientProtocol = (tls: ClusterTls | undefined) =>
  tls === undefined
    ? plainClientProtocol
    : Layer.effect(Runners.RpcClientProtocol)(
        Effect.gen(function* () {
          const serialization = yield* RpcSerialization.RpcSerialization
          return {
            codecFor: serialization.codecFor,
            make: Effect.fnUntraced(function* (address) {
              const socket = yield* NodeSocket.makeTls({
                openTimeout: 1000,
                timeout: 5500,
                host: address.host,
                port: address.port,
                // a name is checked against the certificate's DNS names; an IP against its IP addresses (no SNI: Bun refuses an IP there)
                ...(isIP(address.host) === 0 ? { servername: address.host } : {}),
                ca: tls.ca,
                cert: tls.cert,
                key: tls.key
              })
              return yield* RpcClient.makeProtocolSocket().pipe(
                Effect.provideService(SocketService, socket),
                Effect.provideService(RpcSerialization.RpcSerialization, serialization)
              )
            }, Effect.orDie)
          }
        })
      )

/**
 * A TLS server asking every client for a certificate `tls.ca` signed; each connection handed to the handler once its
 * handshake is done. (The library's TLS server leaves a failed handshake's TCP connection open on Bun, whose
 * TLSSocket.destroy() does not close it: a plain or garbage connection would stay forever. Here it is terminated.)
 */
const tlsServer = (tls: ClusterTls, host: string, port: number) =>
  Effect.gen(function* () {
    const pending = new Set<Tls.TLSSocket>()
    let accept: ((conn: Tls.TLSSocket) => void) | undefined
    const server = Tls.createServer({ cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: true, rejectUnauthorized: true, handshakeTimeout: 5_000 })
    server.on("tlsClientError", (_error, socket) => {
      socket.destroy()
      ;(socket as { _handle?: { terminate?: () => void } })._handle?.terminate?.()
    })
    server.on("secureConnection", (conn: Tls.TLSSocket) => {
      conn.pause()
      if (accept !== undefined) return accept(conn)
      pending.add(conn)
      conn.once("close", () => pending.delete(conn))
    })
    yield* Effect.addFinalizer(() =>
      Effect.callback<void>((resume) => {
        for (const conn of pending) conn.destroy()
        server.close(() => resume(Effect.void))
      })
    )
    yield* Effect.callback<void, SocketServer.SocketServerError>((resume) => {
      server.once("error", (cause) => resume(Effect.fail(new SocketServer.SocketServerError({ reason: new SocketServer.SocketServerOpenError({ cause }) }))))
      server.listen({ host, port }, () => resume(Effect.void))
    })
    const bound = server.address() as AddressInfo
    const address = yield* Effect.fromResult(NetAddress.inetAddressFromIpString(bound.address, bound.port)).pipe(
      Effect.mapError((cause) => new SocketServer.SocketServerError({ reason: new SocketServer.SocketServerOpenError({ cause }) }))
    )
    const run = <R, E, _>(handler: (socket: Socket.Socket) => Effect.Effect<_, E, R>) =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const services = Context.omit(Scope.Scope)(yield* Effect.context<R>()) as Context.Context<R>
        const track = Fiber.runIn(scope)
        accept = (conn) =>
          pipe(
            NodeSocket.fromDuplex(
              Effect.acquireRelease(Effect.succeed(conn), (c) => Effect.sync(() => c.destroySoon())),
              { tlsServer: true }
            ),
            Effect.flatMap(handler),
            Effect.ignoreCause({ log: "Unhandled", message: "Unhandled error in the cluster's TLS socket server" }),
            Effect.runForkWith(Context.add(services, NodeSocket.NetSocket, conn)),
            track
          )
        for (const conn of pending) {
          pending.delete(conn)
          accept(conn)
        }
        return yield* Effect.onExit(Effect.never, () => {
          accept = undefined
          return Scope.close(scope, Exit.void)
        })
      })
    return SocketServer.SocketServer.of({ address, run })
  })

/** Where a runner listens for the others: a TLS server that asks every client for a certificate the CA signed with `tls`; else plain TCP. */
export const socketServer = (tls: ClusterTls | undefined) =>
  tls === undefined
    ? plainSocketServer
    : Effect.gen(function* () {
        const config = yield* ShardingConfig.ShardingConfig
        const listen = Option.orElse(config.runnerListenAddress, () => config.runnerAddress)
        if (Option.isNone(listen)) return yield* Effect.die("a runner's socket server needs its address")
        return Layer.effect(SocketServer.SocketServer, tlsServer(tls, listen.value.host, listen.value.port))
      }).pipe(Layer.unwrap)
