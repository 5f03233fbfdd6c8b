using System;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>
/// Where io_uring is asked for and cannot be used, the start fails with the reason. The sample runs with a seccomp filter
/// that refuses <c>io_uring_setup</c> with EPERM, as a container's default profile does (<see cref="StartupHook"/>).
/// </summary>
public sealed class IoUringUnavailableTests
{
    private static string SeccompHook => typeof(StartupHook).Assembly.Location;

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Asking_for_io_uring_where_seccomp_refuses_it_fails_the_start_with_the_reason()
    {
        using SampleProcess sample = SampleProcess.StartWithHook(descriptorLimit: null, SeccompHook, "--port", "0", "--transport", "iouring");

        (int exitCode, string output, string errors) = await sample.WaitForExitAsync();

        exitCode.ShouldBe(1);
        output.ShouldNotContain("Falconet listening");
        errors.ShouldContain("io_uring_setup was refused (EPERM)");
    }
}
