using System;
using System.IO;
using System.Net.Sockets;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Http.Tests.Server;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Tls;

/// <summary>
/// Failed handshakes of every kind, many times over, leave no file descriptor behind (pool blocks are checked when each
/// test server stops). Runs alone, since it counts the descriptors of the whole process.
/// </summary>
[Collection(nameof(AllocationCollection))]
public class TlsDescriptorTests : ServerTests
{
    private const int Rounds = 40;

    protected override bool Https => true;

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Failed_handshakes_leave_no_file_descriptor_open()
    {
        byte[] hello = await TlsProbe.CaptureClientHelloAsync();
        await using (TestServer warmUp = await StartServerAsync(Hello))
        {
            using RawClient client = warmUp.Connect();
        }

        int before = OpenDescriptors();
        await using (TestServer host = await StartServerAsync(Hello))
        {
            for (int round = 0; round < Rounds; round++)
            {
                // Plain HTTP on the HTTPS port.
                using (RawClient plain = RawClient.Connect(host.EndPoint))
                {
                    await plain.SendAsync("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
                    (await plain.ReceiveEndAsync().WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
                }

                // Half a ClientHello, then the client's FIN.
                using (RawClient truncated = RawClient.Connect(host.EndPoint))
                {
                    await truncated.SendAsync(hello.AsMemory(0, hello.Length / 2));
                    truncated.Socket.Shutdown(SocketShutdown.Send);
                    (await truncated.ReceiveEndAsync().WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
                }

                // A whole ClientHello, then a reset instead of the client's Finished.
                using (RawClient reset = RawClient.Connect(host.EndPoint))
                {
                    await reset.SendAsync(hello);
                    (await reset.ReceiveEndAsync().WaitAsync(TestTimeouts.Operation)).ShouldBeGreaterThan(0);
                    reset.Socket.LingerState = new LingerOption(true, 0);
                }

                // And one that completes, for comparison.
                using RawClient good = host.Connect();
                await good.SendAsync("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
                (await good.ReadResponseAsync()).BodyText.ShouldBe("hello");
            }

            await WaitUntilAsync(() => host.Server.ConnectionCount == 0);
        }

        int after = -1;
        for (int attempt = 0; attempt < 100 && after != before; attempt++)
        {
            await Task.Delay(20);
            after = OpenDescriptors();
        }

        // A leak would be one descriptor per failed handshake: 120 here. A few may come and go with the test host.
        after.ShouldBeLessThanOrEqualTo(before + 5);
    }

    private static ValueTask Hello(HttpContext context)
    {
        context.Response.Write("hello"u8);
        return default;
    }

    private static int OpenDescriptors() => Directory.GetFiles("/proc/self/fd").Length;

    private static async Task WaitUntilAsync(Func<bool> condition)
    {
        for (int i = 0; i < 500 && !condition(); i++)
        {
            await Task.Delay(10);
        }
    }
}

/// <summary>The same test on the libuv transport.</summary>
public sealed class TlsDescriptorTestsOnLibuv : TlsDescriptorTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same test on the io_uring transport.</summary>
public sealed class TlsDescriptorTestsOnIoUring : TlsDescriptorTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
