using System;
using System.Net.Http;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport.IoUring;
using Falconet.Transport.Libuv;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>
/// Where io_uring cannot be used, the server takes the next transport and says why, once; where it is asked for by name, the
/// start fails with the reason. The sample runs with a seccomp filter that refuses <c>io_uring_setup</c> with EPERM, as a
/// container's default profile does (<see cref="StartupHook"/>).
/// </summary>
public sealed class IoUringFallbackTests
{
    private static string SeccompHook => typeof(StartupHook).Assembly.Location;

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Where_seccomp_refuses_io_uring_the_sample_runs_on_libuv_and_its_banner_says_why()
    {
        IoUringTransportFactory.IsAvailable.ShouldBeTrue("io_uring must be usable on the test machine (Linux 6.1 or later)");
        LibuvTransportFactory.IsAvailable.ShouldBeTrue("libuv1 must be installed on the test machine (.ci/run installs it)");
        using SampleProcess sample = SampleProcess.StartWithHook(descriptorLimit: null, SeccompHook, "--port", "0");
        Uri url = await sample.WaitUntilListeningAsync();

        using var http = new HttpClient { BaseAddress = url, Timeout = TestTimeouts.Operation };
        (await http.GetStringAsync("plaintext")).ShouldBe("Hello, World!");
        (int exitCode, string output, string errors) = await sample.InterruptAsync();
        exitCode.ShouldBe(0, $"stderr: {errors}");
        sample.Banner.ShouldContain("with the libuv transport (io_uring cannot be used: io_uring_setup was refused (EPERM)");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Asking_for_io_uring_where_seccomp_refuses_it_fails_the_start_with_the_reason()
    {
        using SampleProcess sample = SampleProcess.StartWithHook(descriptorLimit: null, SeccompHook, "--port", "0", "--transport", "iouring");

        (int exitCode, string output, string errors) = await sample.WaitForExitAsync();

        exitCode.ShouldBe(1);
        output.ShouldNotContain("Falconet listening");
        errors.ShouldContain("io_uring_setup was refused (EPERM)");
    }

    [Fact]
    public void The_default_is_io_uring_then_libuv_then_sockets_and_a_fallback_is_logged_once_with_its_reason()
    {
        var logs = new RecordingLoggerFactory();

        BuiltInTransports.ChooseDefault(ioUringUnavailable: null, libuvAvailable: true, logs.CreateLogger("test")).ShouldBe(TransportKind.IoUring);
        logs.Entries.ShouldBeEmpty();

        BuiltInTransports.ChooseDefault("io_uring is disabled on this system (sysctl kernel.io_uring_disabled = 2).", libuvAvailable: true, logs.CreateLogger("test"))
            .ShouldBe(TransportKind.Libuv);
        RecordingLoggerFactory.LogEntry libuv = logs.Entries.ShouldHaveSingleItem();
        libuv.Level.ShouldBe(Microsoft.Extensions.Logging.LogLevel.Information);
        libuv.Message.ShouldContain("kernel.io_uring_disabled = 2");
        libuv.Message.ShouldContain("libuv transport");

        BuiltInTransports.ChooseDefault("io_uring exists only on Linux.", libuvAvailable: false, logs.CreateLogger("test")).ShouldBe(TransportKind.Sockets);
        logs.Entries.Length.ShouldBe(2);
        logs.Entries[1].Message.ShouldContain("io_uring exists only on Linux.");
        logs.Entries[1].Message.ShouldContain("libuv1");
        logs.Entries[1].Message.ShouldContain("sockets transport");
    }
}
