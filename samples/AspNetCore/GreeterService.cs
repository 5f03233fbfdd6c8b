using System.Globalization;
using System.Threading.Tasks;
using Falconet.Samples.AspNetCore.Grpc;
using Grpc.Core;

namespace Falconet.Samples.AspNetCore;

/// <summary>The sample's gRPC service (Protos/greet.proto): a unary greeting and a stream of numbered ones.</summary>
public sealed class GreeterService : Greeter.GreeterBase
{
    /// <summary>The most messages one <see cref="SayHellos"/> call streams.</summary>
    public const int MaxHellos = 1000;

    public override Task<HelloReply> SayHello(HelloRequest request, ServerCallContext context) =>
        Task.FromResult(new HelloReply { Message = $"Hello, {request.Name}!" });

    public override async Task SayHellos(HellosRequest request, IServerStreamWriter<HelloReply> responseStream, ServerCallContext context)
    {
        if (request.Count is < 0 or > MaxHellos)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument,
                string.Create(CultureInfo.InvariantCulture, $"count must be between 0 and {MaxHellos}; it was {request.Count}")));
        }

        for (int i = 1; i <= request.Count; i++)
        {
            context.CancellationToken.ThrowIfCancellationRequested();
            await responseStream.WriteAsync(new HelloReply
            {
                Message = string.Create(CultureInfo.InvariantCulture, $"Hello, {request.Name}! ({i})"),
            });
        }
    }
}
