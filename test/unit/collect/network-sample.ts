/** A cluster-config.yaml in the shape `l8k discover` writes (values made up for the tests). */
export const SAMPLE_CLUSTER_CONFIG = `# written by l8k discover
flavor: k8s
networkOperator:
  version: v26.7.0
  componentVersion: network-operator-v26.7.0
  repository: nvcr.io/nvidia/mellanox
  namespace: nvidia-network-operator
networkNamespaces: [default]
docaDriver:
  enable: true
  version: doca3.5.0
sriov:
  numVfs: 8
  ethernetMtu: 9000
futureSection:
  someSetting: 42
clusterConfig:
  - identifier: rail-group-a
    machineType: DGX-H100
    linkType: Infiniband
    capabilities:
      nodes:
        sriov: true
        rdma: true
        ib: true
    pfs:
      - deviceID: "1021"
        rdmaDevice: mlx5_0
        pciAddress: "0000:18:00.0"
        networkInterface: ibp24s0
        traffic: east-west
        rail: 0
        psid: MT_0000000838
        partNumber: MCX75310AAS-NEAT
        numaNode: 0
      - deviceID: 1021
        rdmaDevice: mlx5_1
        pciAddress: 0000:3d:00.0
        networkInterface: ibp61s0
        traffic: east-west
        rail: 1
        numaNode: 0
        vendorNote: kept
    workerNodes:
      - gpu-node-1
      - gpu-node-2
    nodeSelector:
      feature.node.kubernetes.io/pci-15b3.present: "true"
`;
