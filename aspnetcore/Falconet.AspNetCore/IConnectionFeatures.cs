using System.Threading.Tasks;
using FalconetContext = Falconet.Http.HttpContext;

namespace Falconet.AspNetCore;

/// <summary>What the body streams and pipes need from a connection's features: start or complete the response the ASP.NET Core way, and the body limit.</summary>
internal interface IConnectionFeatures
{
    /// <summary>The Falconet context of the connection.</summary>
    FalconetContext Context { get; }

    /// <summary>Runs the OnStarting callbacks once; afterwards status and headers are read-only.</summary>
    ValueTask StartAsync();

    /// <summary>The same from a synchronous write.</summary>
    void StartSynchronously();

    /// <summary>Starts, completes and sends the response.</summary>
    ValueTask CompleteAsync();

    /// <summary>The request body limit in force for the current request.</summary>
    long EffectiveMaxRequestBodySize { get; }
}
