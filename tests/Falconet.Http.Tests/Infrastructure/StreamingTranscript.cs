using System.Text;
using System.Threading.Tasks;
using Shouldly;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>
/// The client side of the streaming tests, for the core server and the ASP.NET Core adapter alike: a GET of /stream whose
/// handler writes "first", waits for <c>firstRead</c>, writes "second", waits for <c>secondRead</c> and writes "third",
/// each flushed; optionally a GET of /next pipelined behind it, answered "next".
/// </summary>
internal static class StreamingTranscript
{
    /// <summary>Reads each chunk before releasing the handler, so every flushed chunk must reach the client while the handler waits.</summary>
    public static async Task ReadAsync(RawClient client, bool requestPipelinedBehind, TaskCompletionSource firstRead, TaskCompletionSource secondRead)
    {
        try
        {
            await client.SendAsync("GET /stream HTTP/1.1\r\nHost: test\r\n\r\n" + (requestPipelinedBehind ? "GET /next HTTP/1.1\r\nHost: test\r\n\r\n" : ""));
            (await client.ReadHeadAsync()).Chunked.ShouldBeTrue();
            Encoding.ASCII.GetString(await client.ReadChunkAsync()).ShouldBe("first");
            firstRead.SetResult();
            Encoding.ASCII.GetString(await client.ReadChunkAsync()).ShouldBe("second");
            secondRead.SetResult();
            Encoding.ASCII.GetString(await client.ReadChunkAsync()).ShouldBe("third");
            (await client.ReadChunkAsync()).ShouldBeEmpty();
            if (requestPipelinedBehind)
            {
                (await client.ReadResponseAsync()).BodyText.ShouldBe("next");
            }
        }
        finally
        {
            // A failed read must not leave the handler waiting (the server's stop would report its blocks as leaked).
            firstRead.TrySetResult();
            secondRead.TrySetResult();
        }
    }
}
