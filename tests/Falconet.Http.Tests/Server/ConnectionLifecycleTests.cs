using System;
using System.Collections.Concurrent;
using System.IO;
using System.Reflection;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Falconet.Transport.IoUring;
using Falconet.Transport.Libuv;
using Falconet.Transport.Sockets;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>Where connections run, how they end, which transport they run on, and what the server reads from its options.</summary>
public sealed class ConnectionLifecycleTests
{
    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(IoScheduling.ThreadPool)]
    [InlineData(IoScheduling.IoThreads)]
    public async Task A_request_that_arrives_with_the_connect_is_handled_where_the_scheduling_says_not_on_the_accept_loop(IoScheduling scheduling)
    {
        var threads = new ConcurrentQueue<(string? Name, bool PoolThread)>();
        await using TestServer host = await TestServer.StartAsync(
            context =>
            {
                threads.Enqueue((Thread.CurrentThread.Name, Thread.CurrentThread.IsThreadPoolThread));
                context.Response.Write("ok"u8);
                return default;
            },
            options => options.TransportFactory = new InterceptingTransportFactory(scheduling: scheduling) { AcceptOnceReadable = true });

        // The accept hands the connection over only once its request is readable, so the server's first
        // receive completes at once: the request is parsed and handled wherever the connection starts.
        for (int i = 0; i < 4; i++)
        {
            using RawClient client = host.Connect();
            await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\nGET /second HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
            (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        }

        threads.Count.ShouldBe(8);
        if (scheduling == IoScheduling.IoThreads)
        {
            threads.ShouldAllBe(t => t.Name != null && t.Name.StartsWith("falconet-io-", StringComparison.Ordinal));
        }
        else
        {
            threads.ShouldAllBe(t => t.PoolThread);
        }
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(IoScheduling.ThreadPool)]
    [InlineData(IoScheduling.IoThreads)]
    public async Task A_handler_blocking_its_thread_does_not_stop_the_server_accepting_and_answering_connections(IoScheduling scheduling)
    {
        using var release = new ManualResetEventSlim();
        var slowEntered = new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously);
        string? fastThread = null;
        await using TestServer host = await TestServer.StartAsync(
            context =>
            {
                if (context.Request.PathBytes.SequenceEqual("/slow"u8))
                {
                    slowEntered.TrySetResult(Thread.CurrentThread.Name);

                    // Blocks its thread on purpose: only this connection (with I/O threads, its lane) may stall.
                    release.Wait(TestTimeouts.Operation);
                    context.Response.Write("slow"u8);
                }
                else
                {
                    fastThread = Thread.CurrentThread.Name;
                    context.Response.Write("fast"u8);
                }

                return default;
            },
            options => options.TransportFactory = new InterceptingTransportFactory(ioThreads: 2, scheduling) { AcceptOnceReadable = true });
        try
        {
            using RawClient slow = host.Connect();
            await slow.SendAsync("GET /slow HTTP/1.1\r\nHost: test\r\n\r\n");
            string? slowThread = await slowEntered.Task.WaitAsync(TestTimeouts.Operation);

            // The next connection (with I/O threads, on the other lane: round robin) is accepted and answered meanwhile.
            using RawClient fast = host.Connect();
            await fast.SendAsync("GET /fast HTTP/1.1\r\nHost: test\r\n\r\n");
            (await fast.ReadResponseAsync().WaitAsync(TestTimeouts.Operation)).BodyText.ShouldBe("fast");

            if (scheduling == IoScheduling.IoThreads)
            {
                slowThread.ShouldStartWith("falconet-io-");
                fastThread.ShouldStartWith("falconet-io-");
                fastThread.ShouldNotBe(slowThread);
            }

            release.Set();
            (await slow.ReadResponseAsync()).BodyText.ShouldBe("slow");
        }
        finally
        {
            release.Set();
        }
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(TransportKind.Sockets)]
    [InlineData(TransportKind.Libuv)]
    [InlineData(TransportKind.IoUring)]
    public async Task A_body_read_the_handler_abandoned_completes_before_the_connection_returns_its_blocks(TransportKind kind)
    {
        long outstandingAtCompletion = -1;
        Task<int>? abandoned = null;
        ITransportFactory inner = kind switch
        {
            TransportKind.Libuv => new LibuvTransportFactory(new LibuvTransportOptions { LoopCount = 2, TrackLeaks = true }),
            TransportKind.IoUring => new IoUringTransportFactory(new IoUringTransportOptions { LoopCount = 2, TrackLeaks = true }),
            _ => new SocketTransportFactory(new SocketTransportOptions { IoThreadCount = 2, TrackLeaks = true }),
        };
        var transport = new InterceptingTransportFactory(inner)
        {
            PendingReceiveCompleted = connection => Interlocked.Exchange(ref outstandingAtCompletion, connection.Pool.BlocksOutstanding),
        };
        await using TestServer host = await TestServer.StartAsync(
            context =>
            {
                // Misuse on purpose: the read waits in the transport, into an input block, after the handler returned.
                abandoned = context.Request.BodyReader.ReadAsync(new byte[16]).AsTask();
                context.Response.Write("returned"u8);
                return default;
            },
            options => options.TransportFactory = transport);
        using RawClient client = host.Connect();
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("returned");

        // Draining the unread body finds the receive still pending: the connection is aborted.
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
        // The body ends before its Content-Length: the read reports a truncated request body.
        (await Should.ThrowAsync<BadHttpRequestException>(abandoned!.WaitAsync(TestTimeouts.Operation))).Reason.ShouldBe(RequestRejectionReason.UnexpectedEndOfBody);

        // When the kernel gave the block back, the connection still held it: it returns blocks only after that.
        Interlocked.Read(ref outstandingAtCompletion).ShouldBeGreaterThanOrEqualTo(1);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Options_that_name_no_transport_run_on_io_uring_where_the_kernel_allows_it()
    {
        BuiltInTransports.IoUringUnavailableReason.ShouldBeNull("the test machine's kernel must allow io_uring (the io_uring suites need it too)");
        await using TestServer host = await TestServer.StartAsync(context =>
        {
            context.Response.Write("default"u8);
            return default;
        });

        host.Server.Options.Transport.ShouldBeNull();
        host.Server.Transport.ShouldBeOfType<IoUringTransportFactory>();
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("default");
    }

    [Fact]
    public void The_default_is_io_uring_where_the_kernel_allows_it_and_names_no_fallback()
    {
        var logs = new RecordingLoggerFactory();

        BuiltInTransports.ChooseDefault(null, libuvAvailable: true, logs.CreateLogger("test")).ShouldBe(TransportKind.IoUring);
        BuiltInTransports.ChooseDefault(null, libuvAvailable: false, logs.CreateLogger("test")).ShouldBe(TransportKind.IoUring);

        logs.Entries.ShouldBeEmpty();
    }

    [Fact]
    public void Without_io_uring_the_default_falls_back_to_libuv_and_says_why()
    {
        var logs = new RecordingLoggerFactory();

        BuiltInTransports.ChooseDefault("io_uring is disabled on this system (sysctl kernel.io_uring_disabled = 2).", libuvAvailable: true, logs.CreateLogger("test"))
            .ShouldBe(TransportKind.Libuv);

        RecordingLoggerFactory.LogEntry entry = logs.Entries.ShouldHaveSingleItem();
        entry.Level.ShouldBe(Microsoft.Extensions.Logging.LogLevel.Information);
        entry.Message.ShouldContain("kernel.io_uring_disabled = 2");
        entry.Message.ShouldContain("libuv transport");
    }

    [Fact]
    public void Without_io_uring_or_libuv_the_default_falls_back_to_sockets_and_says_why_and_which_package_would_enable_libuv()
    {
        var logs = new RecordingLoggerFactory();

        BuiltInTransports.ChooseDefault("io_uring exists only on Linux.", libuvAvailable: false, logs.CreateLogger("test")).ShouldBe(TransportKind.Sockets);

        logs.Entries.Length.ShouldBe(2);
        logs.Entries[0].Message.ShouldContain("io_uring exists only on Linux.");
        logs.Entries[0].Message.ShouldContain("sockets transport");
        logs.Entries[1].Level.ShouldBe(Microsoft.Extensions.Logging.LogLevel.Information);
        logs.Entries[1].Message.ShouldContain("libuv1");
        logs.Entries[1].Message.ShouldContain("sockets transport");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_transport_given_in_the_options_serves_requests_and_is_left_to_its_owner()
    {
        var transport = new InterceptingTransportFactory();
        await using TestServer host = await TestServer.StartAsync(
            context =>
            {
                context.Response.Write("through the contract"u8);
                return default;
            },
            options =>
            {
                options.TransportFactory = transport;
                options.Transport = TransportKind.Libuv; // ignored: the given instance wins over the enum
            });
        host.Server.Transport.ShouldBeSameAs(transport);

        using (RawClient client = host.Connect())
        {
            await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("through the contract");
        }

        await host.Server.StopAsync().WaitAsync(TestTimeouts.Operation);
        transport.Disposed.ShouldBeFalse();
        await host.Server.WaitForAllBlocksReturnedAsync(TimeSpan.FromSeconds(5));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Options_changed_after_start_have_no_effect_on_the_running_server()
    {
        var clock = new ManualTimeProvider();
        TimeSpan shutdownTimeout = TimeSpan.FromSeconds(5);
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        FalconetServerOptions? options = null;
        await using TestServer host = await TestServer.StartAsync(
            async context =>
            {
                if (context.Request.PathBytes.SequenceEqual("/wait"u8))
                {
                    entered.TrySetResult();
                    await release.Task;
                }

                context.Response.Write(new byte[1000]);
            },
            configured =>
            {
                options = configured;
                configured.TimeProvider = clock;
                configured.ShutdownTimeout = shutdownTimeout;
            });

        // Everything the server reads, shrunk or emptied after start.
        options!.Limits.MaxRequestLineSize = 16;
        options.Limits.MaxRequestHeaderCount = 1;
        options.Limits = new HttpLimits { MaxRequestLineSize = 16, MaxRequestHeadersSize = 16 };
        options.OutputBufferLimit = 1;
        options.ShutdownTimeout = TimeSpan.Zero;
        options.KeepAliveTimeout = TimeSpan.FromTicks(1);
        options.RequestHeadersTimeout = TimeSpan.FromTicks(1);
        options.Endpoints.Clear();

        using RawClient client = host.Connect();
        await client.SendAsync($"GET /{new string('a', 100)} HTTP/1.1\r\nHost: test\r\nAccept: */*\r\nX-One: 1\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(200);
        response.Header("Content-Length").ShouldBe("1000");

        // The shutdown timeout in force is the one at start, not zero: the stop waits for the in-flight request.
        await client.SendAsync("GET /wait HTTP/1.1\r\nHost: test\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);
        Task stop = host.Server.StopAsync();
        await clock.WaitForOneShotTimerAsync(shutdownTimeout).WaitAsync(TestTimeouts.Operation);
        release.TrySetResult();
        RawResponse last = await client.ReadResponseAsync();
        last.StatusCode.ShouldBe(200);
        last.Header("Connection").ShouldBe("close");
        await stop.WaitAsync(TestTimeouts.Operation);
    }

    [Fact]
    public void The_start_time_copy_of_the_options_takes_every_settable_limit()
    {
        var limits = new HttpLimits();
        PropertyInfo[] settable = Array.FindAll(
            typeof(HttpLimits).GetProperties(BindingFlags.Public | BindingFlags.Instance),
            property => property.SetMethod is { IsPublic: true });
        settable.ShouldNotBeEmpty();
        foreach (PropertyInfo property in settable)
        {
            object value = property.PropertyType == typeof(int)
                ? (object)((int)property.GetValue(limits)! + 7)
                : property.PropertyType == typeof(long)
                    ? (object)((long)property.GetValue(limits)! + 7)
                    : throw new InvalidOperationException($"Give HttpLimits.{property.Name} a test value here.");
            property.SetValue(limits, value);
        }

        var options = new FalconetServerOptions { Limits = limits };
        HttpLimits copy = options.Copy().Limits;

        copy.ShouldNotBeSameAs(limits);
        foreach (PropertyInfo property in settable)
        {
            property.GetValue(copy).ShouldBe(property.GetValue(limits), $"HttpLimits.{property.Name} is not copied at start");
        }
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(TransportKind.Sockets)]
    [InlineData(TransportKind.Libuv)]
    public async Task The_connection_state_is_disposed_once_when_the_connection_closes(TransportKind kind)
    {
        var disposed = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        int disposals = 0;
        await using TestServer host = await TestServer.StartAsync(context =>
        {
            context.ConnectionState ??= new DisposableState(() => disposed.TrySetResult(Interlocked.Increment(ref disposals)));
            context.Response.Write("ok"u8);
            return default;
        }, options => options.Transport = kind);

        using (RawClient client = host.Connect())
        {
            await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
            disposed.Task.IsCompleted.ShouldBeFalse();
        }

        (await disposed.Task.WaitAsync(TestTimeouts.Operation)).ShouldBe(1);
    }

    private sealed class DisposableState(Action onDispose) : IAsyncDisposable
    {
        public ValueTask DisposeAsync()
        {
            onDispose();
            return default;
        }
    }
}
