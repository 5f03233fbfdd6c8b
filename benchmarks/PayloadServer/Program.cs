using System;
using System.Globalization;
using System.Net;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
using Falconet.Http;
using Falconet.Server;

namespace Falconet.Benchmarks.PayloadServer;

/// <summary>
/// Serves GET /bytes/N (N up to 1 MiB) with a fixed random body of N bytes, and reads POST /upload bodies, on a plain port and an HTTPS port of the
/// same server, so that the load harness's HTTPS section (benchmarks/load/harness.py, tls) measures TLS against plain TCP on the same transport.
/// </summary>
/// <remarks>
/// Usage: --port N --https-port N --https-cert cert.pem --https-key key.pem [--transport sockets|libuv|iouring] [--batch-scheduling auto|on|off] [--tls-engine auto|openssl|sslstream]. Runs until SIGTERM
/// or SIGINT, then prints the requests served and the bytes allocated per request.
/// </remarks>
internal static class Program
{
    private const int MaxBody = 1024 * 1024;

    private static readonly byte[] UploadScratch = new byte[64 * 1024];
    private static readonly byte[] Ok = "ok"u8.ToArray();

    public static async Task<int> Main(string[] args)
    {
        string? Option(string name)
        {
            int at = Array.IndexOf(args, name);
            return at >= 0 && at + 1 < args.Length ? args[at + 1] : null;
        }

        if (Option("--port") is not { } port || Option("--https-port") is not { } httpsPort
            || Option("--https-cert") is not { } certificate || Option("--https-key") is not { } key)
        {
            await Console.Error.WriteLineAsync("Usage: --port N --https-port N --https-cert cert.pem --https-key key.pem [--transport sockets|libuv|iouring] [--batch-scheduling auto|on|off] [--tls-engine auto|openssl|sslstream]").ConfigureAwait(false);
            return 2;
        }

        var options = new FalconetServerOptions
        {
            Transport = Option("--transport")?.ToLowerInvariant() switch
            {
                "libuv" => TransportKind.Libuv,
                "iouring" => TransportKind.IoUring,
                "sockets" or null => TransportKind.Sockets,
                string other => throw new ArgumentException($"--transport {other}: expected sockets, libuv or iouring."),
            },
            BatchScheduling = Option("--batch-scheduling")?.ToLowerInvariant() switch
            {
                "on" => BatchScheduling.On,
                "off" => BatchScheduling.Off,
                "auto" or null => BatchScheduling.Auto,
                string other => throw new ArgumentException($"--batch-scheduling {other}: expected auto, on or off."),
            },
        };
        options.Endpoints.Add(new IPEndPoint(IPAddress.Loopback, int.Parse(port, CultureInfo.InvariantCulture)));
        TlsServerOptions tls = TlsServerOptions.FromPemFiles(certificate, key);
        tls.Engine = Option("--tls-engine")?.ToLowerInvariant() switch
        {
            "auto" or null => TlsEngine.Auto,
            "openssl" => TlsEngine.OpenSsl,
            "sslstream" => TlsEngine.SslStream,
            string other => throw new ArgumentException($"--tls-engine {other}: expected auto, openssl or sslstream."),
        };
        options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, int.Parse(httpsPort, CultureInfo.InvariantCulture)), tls));

        byte[] payload = new byte[MaxBody];
        new Random(42).NextBytes(payload);

        var stop = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using PosixSignalRegistration sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal);
        using PosixSignalRegistration sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal);

        await using var server = new FalconetServer(options, context => Serve(context, payload));
        await server.StartAsync().ConfigureAwait(false);
        Console.WriteLine($"Payload server on http://{server.BoundEndpoints[0]} and https://{server.BoundHttpsEndpoints[0]} ({options.Transport}, TLS engine {server.HttpsEngines[0]}, from {tls.Engine})");

        long allocatedAtStart = GC.GetTotalAllocatedBytes(precise: true);
        await stop.Task.ConfigureAwait(false);
        await server.StopAsync().ConfigureAwait(false);
        long requests = server.RequestCount;
        double perRequest = requests == 0 ? 0 : (double)(GC.GetTotalAllocatedBytes(precise: true) - allocatedAtStart) / requests;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"requests={requests} allocated_bytes_per_request={perRequest:F2}"));
        return 0;

        void OnSignal(PosixSignalContext context)
        {
            context.Cancel = true;
            stop.TrySetResult();
        }
    }

    /// <summary>GET /bytes/N: N bytes of the payload with Content-Length; POST /upload: the body read to its end, answered "ok" (400 when its length is not the Content-Length); 404 for anything else.</summary>
    private static ValueTask Serve(HttpContext context, byte[] payload)
    {
        ReadOnlySpan<byte> path = context.Request.PathBytes;
        if (path.SequenceEqual("/upload"u8))
        {
            return ReadUploadAsync(context);
        }

        if (!path.StartsWith("/bytes/"u8)
            || !int.TryParse(path["/bytes/".Length..], NumberStyles.None, CultureInfo.InvariantCulture, out int length)
            || length > MaxBody)
        {
            context.Response.StatusCode = 404;
            return default;
        }

        context.Response.ContentLength = length;
        return context.Response.WriteAsync(payload.AsMemory(0, length));
    }

    /// <summary>Reads the request body to its end into a scratch buffer every request shares (its bytes are not used).</summary>
    private static async ValueTask ReadUploadAsync(HttpContext context)
    {
        long total = 0;
        int read;
        while ((read = await context.Request.Body.ReadAsync(UploadScratch).ConfigureAwait(false)) != 0)
        {
            total += read;
        }

        if (total != context.Request.ContentLength)
        {
            context.Response.StatusCode = 400;
            return;
        }

        context.Response.ContentLength = Ok.Length;
        await context.Response.WriteAsync(Ok).ConfigureAwait(false);
    }
}
