using System;
using System.Globalization;
using System.Net;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
using Falconet.Diagnostics;
using Falconet.Server;
using Falconet.Transport;
using Falconet.Transport.Libuv;

namespace Falconet.Samples.Plaintext;

/// <summary>Runs the TechEmpower sample until Ctrl+C (SIGINT) or SIGTERM, then stops gracefully.</summary>
internal static class Program
{
    private const string Usage = "Usage: Falconet.Samples.Plaintext [--port N] [--transport sockets|libuv] [--scheduling threadpool|iothreads] [--libuv-distribution reuseport|handoff] [--max-connections N] [--io-threads N] [--stats]"
        + " [--https-port N (--https-cert cert.pem --https-key key.pem | --https-pfx file.pfx [--https-password P])]";

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

        var options = new FalconetServerOptions { Scheduling = arguments.Scheduling, MaxConnections = arguments.MaxConnections };
        if (arguments.IoThreads is int ioThreads)
        {
            options.IoThreadCount = ioThreads;
        }
        if (arguments.Transport is { } transport)
        {
            options.Transport = transport;
        }

        options.Endpoints.Add(new IPEndPoint(IPAddress.Loopback, arguments.Port));
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

            options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, httpsPort), tls));
        }

        // A libuv distribution chosen on the command line needs the transport's own options; the sample then owns the transport.
        LibuvTransportFactory? libuv = null;
        try
        {
            libuv = arguments.Distribution is { } distribution ? CreateLibuv(distribution, arguments.Scheduling, options.IoThreadCount) : null;
        }
        catch (Exception exception) when (exception is DllNotFoundException or NotSupportedException)
        {
            await Console.Error.WriteLineAsync(exception.Message).ConfigureAwait(false);
            return 1;
        }

        await using LibuvTransportFactory? ownedTransport = libuv;
        options.TransportFactory = libuv;

        var stop = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using PosixSignalRegistration sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal);
        using PosixSignalRegistration sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal);

        // Counted from the start, only when asked for: the figures printed on exit.
        using ServerCounters? counters = arguments.Stats ? new ServerCounters() : null;
        await using var server = new FalconetServer(options, new PlaintextApplication());
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

        Console.WriteLine($"Falconet listening on http://{server.BoundEndpoints[0]} (/plaintext, /json) with the {(server.Transport is LibuvTransportFactory ? "libuv" : "sockets")} transport, at most {server.MaxConnections} connections; press Ctrl+C to stop");
        foreach (IPEndPoint https in server.BoundHttpsEndpoints)
        {
            Console.WriteLine($"Falconet listening on https://{https} (/plaintext, /json)");
        }

        await stop.Task.ConfigureAwait(false);
        await server.StopAsync().ConfigureAwait(false);

        if (counters is not null)
        {
            long requests = server.RequestCount;
            long allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedAtStart;
            double perRequest = requests == 0 ? 0 : (double)allocated / requests;
            string spread = server.Transport is LibuvTransportFactory loops ? " accepted_per_loop=" + string.Join('/', loops.AcceptedPerLoop) : string.Empty;
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

        static LibuvTransportFactory CreateLibuv(LibuvDistribution distribution, IoScheduling? scheduling, int loops) => new(new LibuvTransportOptions
        {
            LoopCount = loops,
            Distribution = distribution,
            Scheduling = scheduling ?? IoScheduling.IoThreads,
        });

        void OnSignal(PosixSignalContext context)
        {
            // Keep the process alive: the graceful stop below ends it.
            context.Cancel = true;
            stop.TrySetResult();
        }
    }
}
