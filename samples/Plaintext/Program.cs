using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
using Falconet.Diagnostics;
using Falconet.Server;
using Falconet.Transport;
using Falconet.Transport.IoUring;
using Falconet.Transport.Libuv;

namespace Falconet.Samples.Plaintext;

/// <summary>Runs the TechEmpower sample until Ctrl+C (SIGINT) or SIGTERM, then stops gracefully.</summary>
internal static class Program
{
    private const string Usage = "Usage: Falconet.Samples.Plaintext [--port N] [--transport sockets|libuv|iouring] [--scheduling threadpool|iothreads] [--batch-scheduling auto|on|off] [--libuv-distribution reuseport|handoff] [--iouring-sqpoll] [--iouring-batch-wait MICROSECONDS] [--max-connections N] [--io-threads N] [--stats] [--protocols http1|http2|http1and2] [--h2c-port N]"
        + " [--https-port N (--https-cert cert.pem --https-key key.pem | --https-pfx file.pfx [--https-password P])]"
        + " [--unix-socket PATH] [--proxy-protocol [--trusted-proxy CIDR]...] [--reuseport] [--drain-delay SECONDS] [--drain-idle-timeout SECONDS] [--shutdown-timeout SECONDS]";

    public static async Task<int> Main(string[] args)
    {
        long allocatedAtStart = GC.GetTotalAllocatedBytes(precise: true);
        int gen0AtStart = GC.CollectionCount(0);
        int gen1AtStart = GC.CollectionCount(1);
        int gen2AtStart = GC.CollectionCount(2);

        if (!SampleArguments.TryParse(args, out SampleArguments? arguments, out string? error))
        {
            await Console.Error.WriteLineAsync(error).ConfigureAwait(false);
            await Console.Error.WriteLineAsync(Usage).ConfigureAwait(false);
            return 2;
        }

        var options = new FalconetServerOptions
        {
            Scheduling = arguments.Scheduling,
            BatchScheduling = arguments.BatchScheduling,
            MaxConnections = arguments.MaxConnections,
            Protocols = arguments.Protocols,
            ReusePort = arguments.ReusePort,
            DrainDelay = arguments.DrainDelay ?? TimeSpan.Zero,
        };
        if (arguments.DrainIdleTimeout is { } drainIdleTimeout)
        {
            options.DrainIdleTimeout = drainIdleTimeout;
        }

        if (arguments.ShutdownTimeout is { } shutdownTimeout)
        {
            options.ShutdownTimeout = shutdownTimeout;
        }

        if (arguments.IoThreads is int ioThreads)
        {
            options.IoThreadCount = ioThreads;
        }

        if (arguments.Transport is { } transport)
        {
            options.Transport = transport;
        }

        // Socket-activated (systemd, systemd-socket-activate): the sockets passed in replace the TCP port.
        IReadOnlyList<ListenSocketEndPoint> activated = SystemdSockets.Take();
        if (activated.Count == 0)
        {
            options.Endpoints.Add(Plain(new IPEndPoint(IPAddress.Loopback, arguments.Port)));
        }

        foreach (ListenSocketEndPoint socket in activated)
        {
            options.Endpoints.Add(Plain(socket));
        }

        if (arguments.UnixSocket is { } unixSocket)
        {
            options.Endpoints.Add(Plain(new UnixDomainSocketEndPoint(unixSocket)));
            options.UnixSocketPermissions = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.GroupWrite
                | UnixFileMode.OtherRead | UnixFileMode.OtherWrite;
        }

        if (arguments.H2cPort is int h2cPort)
        {
            options.Endpoints.Add(Plain(new HttpEndpoint(IPAddress.Loopback, h2cPort, HttpProtocols.Http2)));
        }

        if (arguments.HttpsPort is int httpsPort)
        {
            TlsServerOptions tls;
            try
            {
                tls = arguments.HttpsPfx is { } pfx
                    ? TlsServerOptions.FromPfxFile(pfx, arguments.HttpsPassword)
                    : TlsServerOptions.FromPemFiles(arguments.HttpsCertificate!, arguments.HttpsKey!);
            }
            catch (Exception exception) when (exception is System.IO.IOException or System.Security.Cryptography.CryptographicException or UnauthorizedAccessException)
            {
                await Console.Error.WriteLineAsync($"Cannot load the HTTPS certificate: {exception.Message}").ConfigureAwait(false);
                return 1;
            }

            tls.Engine = arguments.TlsEngine;
            options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, httpsPort), tls));
        }

        // A libuv distribution or io_uring's submission polling chosen on the command line needs the transport's own options;
        // the sample then owns the transport.
        IAsyncDisposable? owned;
        try
        {
            owned = arguments.Distribution is { } distribution ? CreateLibuv(distribution, arguments.Scheduling, options)
                : arguments.SubmissionPolling || arguments.BatchedTurnWait is not null ? CreateIoUring(arguments, options)
                : null;
        }
        catch (Exception exception) when (exception is DllNotFoundException or NotSupportedException or ArgumentException)
        {
            await Console.Error.WriteLineAsync(exception.Message).ConfigureAwait(false);
            return 1;
        }

        await using IAsyncDisposable? ownedTransport = owned;
        options.TransportFactory = owned as ITransportFactory;

        var stop = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using PosixSignalRegistration sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal);
        using PosixSignalRegistration sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal);

        // Counted from the start, only when asked for: the figures printed on exit.
        using ServerCounters? counters = arguments.Stats ? new ServerCounters() : null;
        var application = new PlaintextApplication();
        await using var server = new FalconetServer(options, application);
        application.Readiness = () => server.IsReady;
        try
        {
            await server.StartAsync().ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is DllNotFoundException or NotSupportedException or System.Net.Sockets.SocketException or System.IO.IOException)
        {
            // A missing libuv, a port in use: one clear line instead of a stack trace.
            await Console.Error.WriteLineAsync(exception.Message).ConfigureAwait(false);
            return 1;
        }

        SystemdNotify.Send("READY=1");
        Console.WriteLine($"Falconet listening on {Url(server.ListeningOn[0])} (/plaintext, /json, /health) with the {TransportName(server.Transport)} transport, at most {server.MaxConnections} connections; press Ctrl+C to stop");
        for (int i = 0; i < server.BoundHttpsEndpoints.Count; i++)
        {
            Console.WriteLine($"Falconet listening on https://{server.BoundHttpsEndpoints[i]} (/plaintext, /json) with the {server.HttpsEngines[i]} TLS engine");
        }

        for (int i = 1; i < server.ListeningOn.Count - server.BoundHttpsEndpoints.Count; i++)
        {
            string only = (options.Endpoints[i] is ProxyProtocolEndPoint proxy ? proxy.EndPoint : options.Endpoints[i]) is HttpEndpoint
                ? " for HTTP/2 only (prior knowledge)"
                : string.Empty;
            Console.WriteLine($"Falconet listening on {Url(server.ListeningOn[i])} (/plaintext, /json){only}");
        }

        await stop.Task.ConfigureAwait(false);
        SystemdNotify.Send("STOPPING=1");
        await server.StopAsync().ConfigureAwait(false);

        if (counters is not null)
        {
            long requests = server.RequestCount;
            long allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedAtStart;
            double perRequest = requests == 0 ? 0 : (double)allocated / requests;
            string spread = server.Transport switch
            {
                LibuvTransportFactory loops => " accepted_per_loop=" + string.Join('/', loops.AcceptedPerLoop),
                IoUringTransportFactory rings => " accepted_per_loop=" + string.Join('/', rings.AcceptedPerLoop),
                _ => string.Empty,
            };
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"requests={requests} allocated_bytes_per_request={perRequest:F2} gen0={GC.CollectionCount(0) - gen0AtStart} gen1={GC.CollectionCount(1) - gen1AtStart} gen2={GC.CollectionCount(2) - gen2AtStart}{spread}"));

            // After the stop every connection has ended, so every pool block must be back.
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"connections_open={server.ConnectionCount} blocks_outstanding={server.BlocksOutstanding} max_connections={server.MaxConnections} slabs_allocated={server.PoolSlabsAllocated} slabs_released={server.PoolSlabsReleased}"));
            Console.WriteLine(counters.Line(ServerMetrics.RejectedConnectionsName));
            Console.WriteLine(counters.Line(ServerMetrics.RejectedRequestsName));
            Console.WriteLine(counters.Line(ServerMetrics.ClosedConnectionsName));
        }

        return 0;

        static IoUringTransportFactory CreateIoUring(SampleArguments arguments, FalconetServerOptions options) => new(new IoUringTransportOptions
        {
            LoopCount = options.IoThreadCount,
            ReusePort = options.ReusePort,
            SubmissionPolling = arguments.SubmissionPolling,
            BatchedTurnWait = arguments.BatchedTurnWait ?? TimeSpan.Zero,
            Scheduling = arguments.Scheduling ?? IoScheduling.IoThreads,
        });

        static string TransportName(ITransportFactory? transport) => transport switch
        {
            LibuvTransportFactory => "libuv",
            IoUringTransportFactory => "io_uring",
            _ => "sockets",
        };

        static LibuvTransportFactory CreateLibuv(LibuvDistribution distribution, IoScheduling? scheduling, FalconetServerOptions options) => new(new LibuvTransportOptions
        {
            LoopCount = options.IoThreadCount,
            ReusePort = options.ReusePort,
            Distribution = distribution,
            Scheduling = scheduling ?? IoScheduling.IoThreads,
        });

        EndPoint Plain(EndPoint endpoint)
        {
            if (!arguments.ProxyProtocol)
            {
                return endpoint;
            }

            var proxy = new ProxyProtocolEndPoint(endpoint);
            foreach (IPNetwork network in arguments.TrustedProxies)
            {
                proxy.TrustedProxies.Add(network);
            }

            return proxy;
        }

        static string Url(EndPoint endpoint) => endpoint is UnixDomainSocketEndPoint unix ? $"http://unix:{unix}" : $"http://{endpoint}";

        void OnSignal(PosixSignalContext context)
        {
            // Keep the process alive: the graceful stop below ends it.
            context.Cancel = true;
            stop.TrySetResult();
        }
    }
}
