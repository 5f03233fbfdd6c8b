using System;
using System.Diagnostics;
using System.Globalization;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Samples.AspNetCore.Grpc;
using Grpc.Core;
using Grpc.Net.Client;

// gRPC unary calls per second against the ASP.NET Core sample's greeter (samples/AspNetCore/Protos/greet.proto), with
// Grpc.Net.Client: CONNECTIONS HTTP/2 connections (one GrpcChannel and one SocketsHttpHandler each), STREAMS calls in
// flight on each, every call answered before its worker sends the next. A warm-up first (the client's JIT tiers up),
// then the measured window, each edge announced on its own line so a harness can read the server's CPU time there:
//
//   dotnet Falconet.Benchmarks.GrpcLoad.dll --url http://127.0.0.1:5000 [--connections 4] [--streams 16]
//       [--duration 5] [--warmup 2] [--insecure]
//
//   measuring                 (the window starts)
//   measured                  (the window ends)
//   calls=N seconds=S calls_per_second=R errors=E client_user=U client_system=K
//
// calls and errors count the window only; client_user and client_system are this process's CPU seconds in it.
// --insecure accepts any server certificate (the harness's self-signed one). Exit code 0, or 2 for bad arguments.
Arguments options;
try
{
    options = new Arguments(args);
    if (options.Url is null)
    {
        throw new ArgumentException("--url is required");
    }
}
catch (ArgumentException e) when (e is not ArgumentNullException)
{
    Console.Error.WriteLine(e.Message);
    Console.Error.WriteLine("usage: --url http(s)://host:port [--connections N] [--streams N] [--duration S] [--warmup S] [--insecure]");
    return 2;
}

var channels = new GrpcChannel[options.Connections];
for (int i = 0; i < channels.Length; i++)
{
    var handler = new SocketsHttpHandler
    {
        EnableMultipleHttp2Connections = false,
        PooledConnectionIdleTimeout = Timeout.InfiniteTimeSpan,
    };
    if (options.Insecure)
    {
        handler.SslOptions.RemoteCertificateValidationCallback = static (_, _, _, _) => true;
    }

    channels[i] = GrpcChannel.ForAddress(options.Url, new GrpcChannelOptions { HttpHandler = handler, DisposeHttpClient = true });
}

int workers = options.Connections * options.Streams;
var calls = new long[workers * 8]; // one counter per worker, a cache line apart
var errors = new long[workers * 8];
using var stop = new CancellationTokenSource();
var tasks = new Task[workers];
for (int w = 0; w < workers; w++)
{
    var client = new Greeter.GreeterClient(channels[w % channels.Length]);
    int slot = w * 8;
    tasks[w] = Task.Run(async () =>
    {
        var request = new HelloRequest { Name = "load" };
        while (!stop.IsCancellationRequested)
        {
            try
            {
                HelloReply reply = await client.SayHelloAsync(request);
                if (reply.Message.Length == 0)
                {
                    Volatile.Write(ref errors[slot], errors[slot] + 1);
                    continue;
                }

                Volatile.Write(ref calls[slot], calls[slot] + 1);
            }
            catch (RpcException)
            {
                Volatile.Write(ref errors[slot], errors[slot] + 1);
                await Task.Delay(10);
            }
        }
    });
}

Thread.Sleep(TimeSpan.FromSeconds(options.Warmup));
Process self = Process.GetCurrentProcess();
self.Refresh();
(long Calls, long Errors) start = Sum(calls, errors);
TimeSpan userStart = self.UserProcessorTime, systemStart = self.PrivilegedProcessorTime;
long started = Stopwatch.GetTimestamp();
Console.WriteLine("measuring");

Thread.Sleep(TimeSpan.FromSeconds(options.Duration));
(long Calls, long Errors) end = Sum(calls, errors);
double seconds = Stopwatch.GetElapsedTime(started).TotalSeconds;
self.Refresh();
TimeSpan user = self.UserProcessorTime - userStart, system = self.PrivilegedProcessorTime - systemStart;
Console.WriteLine("measured");

stop.Cancel();
await Task.WhenAll(tasks).WaitAsync(TimeSpan.FromSeconds(30));
foreach (GrpcChannel channel in channels)
{
    channel.Dispose();
}

long measuredCalls = end.Calls - start.Calls;
Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
    $"calls={measuredCalls} seconds={seconds:F3} calls_per_second={measuredCalls / seconds:F1} errors={end.Errors - start.Errors} client_user={user.TotalSeconds:F3} client_system={system.TotalSeconds:F3}"));
return 0;

static (long Calls, long Errors) Sum(long[] calls, long[] errors)
{
    long c = 0, e = 0;
    for (int i = 0; i < calls.Length; i += 8)
    {
        c += Volatile.Read(ref calls[i]);
        e += Volatile.Read(ref errors[i]);
    }

    return (c, e);
}

/// <summary>The command line: --name value pairs and the --insecure switch.</summary>
internal sealed class Arguments
{
    public Arguments(string[] args)
    {
        for (int i = 0; i < args.Length; i++)
        {
            string name = args[i];
            if (name == "--insecure")
            {
                Insecure = true;
                continue;
            }

            if (i + 1 >= args.Length)
            {
                throw new ArgumentException($"{name} needs a value");
            }

            string value = args[++i];
            switch (name)
            {
                case "--url": Url = value; break;
                case "--connections": Connections = Positive(name, value); break;
                case "--streams": Streams = Positive(name, value); break;
                case "--duration": Duration = Positive(name, value); break;
                case "--warmup": Warmup = Whole(name, value, minimum: 0); break;
                default: throw new ArgumentException($"unknown option {name}");
            }
        }
    }

    public string? Url { get; }

    public int Connections { get; } = 4;

    public int Streams { get; } = 16;

    public int Duration { get; } = 5;

    public int Warmup { get; } = 2;

    public bool Insecure { get; }

    private static int Positive(string name, string value) => Whole(name, value, minimum: 1);

    private static int Whole(string name, string value, int minimum) =>
        int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n >= minimum
            ? n
            : throw new ArgumentException($"{name} must be a whole number of at least {minimum}, not '{value}'");
}
