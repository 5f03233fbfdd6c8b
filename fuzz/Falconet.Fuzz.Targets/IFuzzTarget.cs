using System;

namespace Falconet.Fuzz;

/// <summary>A fuzz target: one input is one run against a started server, and a broken property throws <see cref="FuzzPropertyException"/>.</summary>
public interface IFuzzTarget : IAsyncDisposable
{
    /// <summary>Runs <paramref name="input"/>; throws <see cref="FuzzPropertyException"/> when a property breaks.</summary>
    void Run(ReadOnlySpan<byte> input);
}
