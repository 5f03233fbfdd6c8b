using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>Runs alone: the scheduling policy is the whole process's, and every server of the process may change it.</summary>
[CollectionDefinition(nameof(BatchSchedulingCollection), DisableParallelization = true)]
public sealed class BatchSchedulingCollection
{
}

/// <summary>
/// <see cref="FalconetServerOptions.BatchScheduling"/>: the process's threads run under SCHED_BATCH while a server whose
/// transport hands completions to other threads runs, and get their policy back when it stops. Read with
/// <c>sched_getscheduler</c> on the thread that runs the handler, and on every thread of the process.
/// </summary>
[Collection(nameof(BatchSchedulingCollection))]
public sealed class BatchSchedulingTests : ServerTests, IDisposable
{
    public BatchSchedulingTests() => BatchPolicy.RefreshMilliseconds = 0;

    public void Dispose() => BatchPolicy.RefreshMilliseconds = 1000;

    private const int SchedOther = 0;
    private const int SchedBatch = 3;

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(TransportKind.Sockets, null, BatchScheduling.Auto, SchedBatch)]
    [InlineData(TransportKind.Sockets, IoScheduling.IoThreads, BatchScheduling.Auto, SchedBatch)]
    [InlineData(TransportKind.Sockets, null, BatchScheduling.Off, SchedOther)]
    [InlineData(TransportKind.Libuv, null, BatchScheduling.Auto, SchedOther)]
    [InlineData(TransportKind.Libuv, IoScheduling.ThreadPool, BatchScheduling.Auto, SchedBatch)]
    [InlineData(TransportKind.Libuv, null, BatchScheduling.On, SchedBatch)]
    [InlineData(TransportKind.IoUring, null, BatchScheduling.Auto, SchedOther)]
    [InlineData(TransportKind.IoUring, IoScheduling.ThreadPool, BatchScheduling.Auto, SchedBatch)]
    public async Task The_handler_runs_under_batch_where_the_transport_hands_completions_over_and_the_policy_is_restored_at_stop(
        TransportKind transport, IoScheduling? scheduling, BatchScheduling setting, int expected)
    {
        BatchPolicy.Holders.ShouldBe(0, "no server of another test may still hold the policy");
        int handlerPolicy = -1;
        await using (TestServer host = await TestServer.StartAsync((HttpContext context) =>
        {
            handlerPolicy = BatchPolicy.PolicyOf(0);
            return default;
        }, options =>
        {
            options.Transport = transport;
            options.Scheduling = scheduling;
            options.BatchScheduling = setting;
            options.HeartbeatInterval = TimeSpan.FromMilliseconds(20);
        }))
        {
            using HttpClient client = host.CreateHttpClient();
            (await client.GetAsync(host.BaseAddress)).EnsureSuccessStatusCode();
            if (expected == SchedOther)
            {
                Volatile.Read(ref handlerPolicy).ShouldBe(SchedOther);
                ThreadsNotUnder(SchedOther).ShouldBeEmpty();
            }
            else
            {
                // Every thread of the process, those started before the server and those started since: a thread started
                // by a changed thread begins under SCHED_OTHER (glibc) and gets the policy on the next heartbeat.
                await AllThreadsUnderAsync(SchedBatch);
                (await client.GetAsync(host.BaseAddress)).EnsureSuccessStatusCode();
                Volatile.Read(ref handlerPolicy).ShouldBe(SchedBatch);
                using var stop = new ManualResetEventSlim();
                int started = -1;
                var thread = new Thread(() =>
                {
                    long deadline = Environment.TickCount64 + (long)TestTimeouts.Operation.TotalMilliseconds;
                    while ((started = BatchPolicy.PolicyOf(0)) != SchedBatch && Environment.TickCount64 < deadline)
                    {
                        stop.Wait(10);
                    }
                });
                thread.Start();
                thread.Join();
                started.ShouldBe(SchedBatch);
            }
        }

        BatchPolicy.Holders.ShouldBe(0);
        ThreadsNotUnder(SchedOther).ShouldBeEmpty();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_policy_stays_until_the_last_of_two_servers_stops()
    {
        BatchPolicy.Holders.ShouldBe(0);
        static void Configure(FalconetServerOptions options)
        {
            options.Transport = TransportKind.Sockets;
            options.HeartbeatInterval = TimeSpan.FromMilliseconds(20);
        }

        await using TestServer first = await TestServer.StartAsync(Ok, Configure);
        await using (TestServer second = await TestServer.StartAsync(Ok, Configure))
        {
            BatchPolicy.Holders.ShouldBe(2);
            await AllThreadsUnderAsync(SchedBatch);
        }

        BatchPolicy.Holders.ShouldBe(1);
        await AllThreadsUnderAsync(SchedBatch);
        await first.DisposeAsync();
        BatchPolicy.Holders.ShouldBe(0);
        ThreadsNotUnder(SchedOther).ShouldBeEmpty();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_thread_the_application_put_under_batch_itself_keeps_it_after_the_stop()
    {
        using var ready = new ManualResetEventSlim();
        using var done = new ManualResetEventSlim();
        int before = -1;
        int after = -1;
        int ownId = 0;
        const string ownName = "own-batch";
        var own = new Thread(() =>
        {
            // What chrt -b 0 does, for this thread alone.
            int priority = 0;
            before = SetScheduler(0, SchedBatch, ref priority) == 0 ? BatchPolicy.PolicyOf(0) : -1;
            ownId = GetThreadId();
            ready.Set();
            done.Wait();
            after = BatchPolicy.PolicyOf(0);
        });
        own.Name = ownName;
        own.Start();
        ready.Wait(TestTimeouts.Operation).ShouldBeTrue();
        before.ShouldBe(SchedBatch);

        await using (TestServer host = await TestServer.StartAsync(Ok, options => options.Transport = TransportKind.Sockets))
        {
            ThreadsNotUnder(SchedBatch).ShouldNotContain(thread => thread.StartsWith($"{ownId} ", StringComparison.Ordinal));
        }

        ThreadsNotUnder(SchedOther).ShouldBe([$"{ownId} {ownName}: {SchedBatch}"]);
        done.Set();
        own.Join();
        after.ShouldBe(SchedBatch);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Where_the_kernel_refuses_the_policy_auto_logs_why_and_serves_and_on_fails_the_start_naming_the_option()
    {
        BatchPolicy.SimulatedRefusal = "sched_setscheduler refused SCHED_BATCH for thread 1: Operation not permitted (errno 1)";
        try
        {
            var logs = new RecordingLoggerFactory();
            await using (TestServer host = await TestServer.StartAsync(Ok, options =>
            {
                options.Transport = TransportKind.Sockets;
                options.LoggerFactory = logs;
            }))
            {
                using HttpClient client = host.CreateHttpClient();
                (await client.GetAsync(host.BaseAddress)).EnsureSuccessStatusCode();
                BatchPolicy.PolicyOf(0).ShouldBe(SchedOther);
            }

            logs.Entries.ShouldContain(entry => entry.EventId == 118 && entry.Message.Contains("Operation not permitted", StringComparison.Ordinal));

            var options = new FalconetServerOptions { Transport = TransportKind.Sockets, BatchScheduling = BatchScheduling.On };
            options.Endpoints.Add(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
            await using var server = new FalconetServer(options, _ => default);
            NotSupportedException error = await Should.ThrowAsync<NotSupportedException>(() => server.StartAsync());
            error.Message.ShouldContain("BatchScheduling.On");
            error.Message.ShouldContain("Operation not permitted");
            server.BoundEndpoints.ShouldBeEmpty();
        }
        finally
        {
            BatchPolicy.SimulatedRefusal = null;
        }

        BatchPolicy.Holders.ShouldBe(0);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_start_that_fails_after_taking_the_policy_gives_it_back()
    {
        BatchPolicy.Holders.ShouldBe(0);
        await using TestServer first = await TestServer.StartAsync(Ok, options => options.Transport = TransportKind.Sockets);
        BatchPolicy.Holders.ShouldBe(1);

        // The same port again: the bind fails after the policy was taken.
        var options = new FalconetServerOptions { Transport = TransportKind.Sockets, BatchScheduling = BatchScheduling.On };
        options.Endpoints.Add(first.EndPoint);
        await using var second = new FalconetServer(options, Ok);
        await Should.ThrowAsync<IOException>(() => second.StartAsync());
        BatchPolicy.Holders.ShouldBe(1);

        await first.DisposeAsync();
        BatchPolicy.Holders.ShouldBe(0);
        ThreadsNotUnder(SchedOther).ShouldBeEmpty();
    }

    [Fact]
    public void An_unknown_setting_is_refused()
    {
        var options = new FalconetServerOptions { BatchScheduling = (BatchScheduling)7 };
        options.Endpoints.Add(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
        Should.Throw<ArgumentOutOfRangeException>(() => options.Validate()).ParamName.ShouldBe(nameof(FalconetServerOptions.BatchScheduling));
    }

    private static ValueTask Ok(HttpContext context) => default;

    /// <summary>Every thread of the process that is not under <paramref name="policy"/>, by id and name (a thread that ended meanwhile is left out).</summary>
    private static List<string> ThreadsNotUnder(int policy)
        => Directory.EnumerateDirectories("/proc/self/task")
            .Select(entry => (Entry: entry, Policy: BatchPolicy.PolicyOf(int.Parse(Path.GetFileName(entry), CultureInfo.InvariantCulture))))
            .Where(thread => thread.Policy >= 0 && thread.Policy != policy)
            .Select(thread => $"{Path.GetFileName(thread.Entry)} {ReadName(thread.Entry)}: {thread.Policy}")
            .ToList();

    private static string ReadName(string task)
    {
        try
        {
            return File.ReadAllText(Path.Combine(task, "comm")).Trim();
        }
        catch (IOException)
        {
            return "(ended)";
        }
    }

    /// <summary>Waits (bounded) until every thread of the process is under <paramref name="policy"/>, then asserts it.</summary>
    private static async Task AllThreadsUnderAsync(int policy)
    {
        long deadline = Environment.TickCount64 + (long)TestTimeouts.Operation.TotalMilliseconds;
        while (ThreadsNotUnder(policy).Count > 0 && Environment.TickCount64 < deadline)
        {
            await Task.Delay(10);
        }

        ThreadsNotUnder(policy).ShouldBeEmpty();
    }

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "gettid")]
    private static extern int GetThreadId();

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "sched_setscheduler")]
    private static extern int SetScheduler(int threadId, int policy, ref int priority);
}

/// <summary>
/// The sample in a process of its own: its threads run under SCHED_BATCH on the sockets transport and keep SCHED_OTHER
/// with <c>--batch-scheduling off</c>; where a seccomp filter refuses the policy (<see cref="StartupHook"/>), <c>on</c> fails the
/// start with the reason and the default runs on without it.
/// </summary>
public sealed class BatchSchedulingProcessTests
{
    private static string SeccompHook => typeof(StartupHook).Assembly.Location;

    private static readonly Dictionary<string, string> DenyScheduling = new() { [StartupHook.DenySchedulingVariable] = "1" };

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("sockets", "auto", 3)]
    [InlineData("sockets", "off", 0)]
    [InlineData("libuv", "auto", 0)]
    [InlineData("libuv", "on", 3)]
    public async Task The_sample_s_threads_run_under_the_policy_the_setting_and_transport_ask_for(string transport, string setting, int expected)
    {
        using SampleProcess sample = SampleProcess.StartWithHook(descriptorLimit: null, startupHook: null, environment: null, normalScheduling: true,
            "--port", "0", "--transport", transport, "--batch-scheduling", setting);
        Uri url = await sample.WaitUntilListeningAsync();
        using (var client = new HttpClient())
        {
            (await client.GetStringAsync(new Uri(url, "plaintext"))).ShouldBe("Hello, World!");
        }

        int pid = sample.Process.Id;
        long deadline = Environment.TickCount64 + (long)TestTimeouts.Operation.TotalMilliseconds;
        List<int> policies;
        while ((policies = PoliciesOf(pid)).Any(policy => policy != expected) && Environment.TickCount64 < deadline)
        {
            // A thread started since the last heartbeat gets the policy on the next (at most a second).
            await Task.Delay(50);
        }

        policies.ShouldNotBeEmpty();
        policies.ShouldAllBe(policy => policy == expected);
        (int exitCode, _, _) = await sample.TerminateAsync();
        exitCode.ShouldBe(0);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Where_seccomp_refuses_the_policy_on_fails_the_start_naming_the_option_and_the_reason()
    {
        using SampleProcess sample = SampleProcess.StartWithHook(descriptorLimit: null, SeccompHook, DenyScheduling, normalScheduling: true,
            "--port", "0", "--transport", "sockets", "--batch-scheduling", "on");

        (int exitCode, string output, string errors) = await sample.WaitForExitAsync();

        exitCode.ShouldBe(1);
        output.ShouldNotContain("Falconet listening");
        errors.ShouldContain("BatchScheduling.On cannot be honoured");
        errors.ShouldContain("sched_setscheduler refused SCHED_BATCH");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Where_seccomp_refuses_the_policy_the_default_serves_under_the_policy_the_threads_had()
    {
        using SampleProcess sample = SampleProcess.StartWithHook(descriptorLimit: null, SeccompHook, DenyScheduling, normalScheduling: true,
            "--port", "0", "--transport", "sockets");
        Uri url = await sample.WaitUntilListeningAsync();
        using (var client = new HttpClient())
        {
            (await client.GetStringAsync(new Uri(url, "plaintext"))).ShouldBe("Hello, World!");
        }

        PoliciesOf(sample.Process.Id).ShouldAllBe(policy => policy == 0);
        (int exitCode, _, _) = await sample.TerminateAsync();
        exitCode.ShouldBe(0);
    }

    private static List<int> PoliciesOf(int pid)
        => Directory.EnumerateDirectories($"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/task")
            .Select(entry => BatchPolicy.PolicyOf(int.Parse(Path.GetFileName(entry), CultureInfo.InvariantCulture)))
            .Where(policy => policy >= 0)
            .ToList();
}
