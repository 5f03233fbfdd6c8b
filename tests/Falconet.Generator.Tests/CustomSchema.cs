using Falconet.Generator.Planning;
using Falconet.Generator.Schema;

namespace Falconet.Generator.Tests;

/// <summary>
/// A small schema used to show the emitted shape without the defaults: a long method, a primary header, Content-Length, and
/// RFC 7541's static table over other slots (a response header, Accept-Encoding, with a value of its own in the table).
/// </summary>
internal static class CustomSchema
{
    public static SchemaModel Model { get; } = new(
        EquatableArray.From(new[] { "GET", "PURGE", "PROPFIND" }),
        EquatableArray.From(new[] { "HTTP/1.1" }),
        EquatableArray.From(new[]
        {
            new HeaderModel("Host", true, false, EquatableArray<string>.Empty),
            new HeaderModel("Content-Length", false, true, EquatableArray<string>.Empty),
            new HeaderModel("ETag", false, false, EquatableArray<string>.Empty),
            new HeaderModel("X-Trace", false, false, EquatableArray.From(new[] { "on", "off" })),
            new HeaderModel("Connection", true, false, EquatableArray.From(new[] { "keep-alive", "close" })),
        }),
        EquatableArray.From(new[]
        {
            new HeaderModel("Server", true, false, EquatableArray<string>.Empty),
            new HeaderModel("Content-Length", false, true, EquatableArray<string>.Empty),
            new HeaderModel("ETag", false, false, EquatableArray<string>.Empty),
            new HeaderModel("X-Trace", false, false, EquatableArray.From(new[] { "on" })),
            new HeaderModel("Connection", false, false, EquatableArray.From(new[] { "close" })),
            new HeaderModel("Accept-Encoding", false, false, EquatableArray<string>.Empty),
        }),
        HPack: DefaultSchema.File.HPack!.Model);

    public const string Namespace = "Custom.Http";

    /// <summary>The plan the runtime's build (FalconetGenerate=Runtime) would make of this schema.</summary>
    public static GenerationPlan Plan(string ns = Namespace) =>
        GenerationPlanner.Plan(Model, new GeneratorOptions(ns, "public", Runtime: true, EquatableArray<DiagnosticInfo>.Empty), FalconetGenerator.Version);
}
